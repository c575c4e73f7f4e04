import { describe, expect, it } from "vitest";
import type { components } from "../../packages/client/src/generated/openapi";
import { call, callRaw } from "./support/api";
import {
  agentOf,
  assessOk,
  createPolicy,
  type Json,
  orgWithKey,
  payment,
  reasonKeys,
} from "./support/assess";
import { provenAgentOrg, type provenHolder } from "./support/credentials";
import { ownerSql } from "./support/db";
import { errorBody } from "./support/errors";
import { newPrincipal } from "./support/identity";

// docs/rules.md: a policy with a rule list, through POST /v1/policies and POST /v1/assess.

type Condition = components["schemas"]["RuleCondition"];
const c = (attr: string, op: Condition["op"], value: Condition["value"]) => ({ attr, op, value });

/** A claim: decoded JSON naming the agent by `agent_id` (earns no trust, docs/assess.md). */
function pay(agentId: string, changes: Json = {}) {
  return { mandate: payment(changes), agent_id: agentId };
}

type Proven = Awaited<ReturnType<typeof provenHolder>>;

/**
 * A fresh verified presentation of a proven agent's payment of 19900 USD (`changes` to the
 * closed mandate): only an agent proven by possession earns the trust to be approved
 * (docs/assess.md, "What each kind of evidence earns").
 */
async function proven(agent: Pick<Proven, "body">, changes: Json = {}) {
  return await agent.body({ payment_amount: { amount: 19_900, currency: "USD" }, ...changes });
}

describe("POST /v1/policies with a rule list", () => {
  it("stores and answers the rules as written", async () => {
    const { org } = await orgWithKey();
    const rules = {
      max_amount: 100_000,
      grammar: 1,
      rules: [
        {
          id: "night-large",
          action: "review",
          description: "large payments at night",
          when: { all: [c("amount", "gt", 50_000), c("time.hour", "between", [0, 5])] },
        },
        { id: "burst", action: "deny", when: c("count.agent.PT10M", "gte", 20) },
      ],
    };
    const created = await createPolicy(org, rules, { activate: false });
    expect(created.rules).toEqual(rules);
    const read = await call(`/v1/policies/${created.id}`, { token: org.token });
    expect(read.json.rules).toEqual(rules);
  });

  it("refuses a rule that cannot be evaluated: 400 with the path of the fault", async () => {
    const { org } = await orgWithKey();
    const res = await call("/v1/policies", {
      method: "POST",
      token: org.token,
      body: {
        name: "bad",
        rules: {
          grammar: 1,
          rules: [
            { id: "ok", action: "review", when: c("amount", "gt", 1) },
            {
              id: "bad",
              action: "deny",
              when: { any: [c("currency", "eq", "USD"), c("risk.level", "gte", "severe")] },
            },
          ],
        },
      },
    });
    expect(res.status).toBe(400);
    expect(res.json).toEqual(
      errorBody("invalid_request", [
        {
          path: "rules.rules.1.when.any.1.value",
          message: "must be one of normal, elevated, highest",
          code: "custom",
        },
      ]),
    );
    const list = await call("/v1/policies", { token: org.token });
    expect(list.json.data).toEqual([]);
  });

  it("is in the OpenAPI document, recursive conditions included", async () => {
    const { json } = await callRaw("/openapi.json");
    const schemas = json.components.schemas;
    expect(Object.keys(schemas.PolicyRules.properties)).toEqual(
      expect.arrayContaining(["max_amount", "currencies", "geo", "velocity", "grammar", "rules"]),
    );
    expect(schemas.PolicyRule.properties.when.$ref).toBe("#/components/schemas/RuleCondition");
    expect(JSON.stringify(schemas.RuleCondition)).toContain("#/components/schemas/RuleCondition");
  });
});

describe("live assessments follow the active rule list", () => {
  it("a deny rule denies, a review rule reviews, and otherwise the model decides", async () => {
    const { org, key, body } = await provenAgentOrg();
    const agent = { body };
    await createPolicy(org, {
      grammar: 1,
      rules: [
        { id: "blocked-payee", action: "deny", when: c("payee.id", "eq", "merchant_blocked") },
        { id: "big", action: "review", when: c("amount", "gte", 50_000) },
      ],
    });
    const plain = await assessOk(key, await proven(agent));
    expect(plain.decision).toBe("approve");

    const blocked = await assessOk(
      key,
      await proven(agent, { payee: { id: "merchant_blocked", name: "Blocked" } }),
    );
    expect(blocked.decision).toBe("deny");
    expect(reasonKeys(blocked.outcome)).toEqual(["policy_rule_denied"]);
    expect(blocked.outcome.outcome.reason).toBe('Denied: policy rule "blocked-payee" matched.');

    const big = await assessOk(
      key,
      await proven(agent, { payment_amount: { amount: 60_000, currency: "USD" } }),
    );
    expect(big.decision).toBe("review");
    expect(big.outcome.outcome.reason).toBe('Review: policy rule "big" matched.');
  });

  it("counts the agent's assessments in the window, in the context query", async () => {
    const { org, key, body, holder } = await provenAgentOrg();
    const agent = { body };
    const other = await holder();
    await createPolicy(org, {
      grammar: 1,
      rules: [{ id: "third", action: "review", when: c("count.agent.1h", "gte", 2) }],
    });
    expect((await assessOk(key, await proven(agent))).decision).toBe("approve");
    expect((await assessOk(key, await proven(agent))).decision).toBe("approve");
    expect((await assessOk(key, await proven(other))).decision).toBe("approve");
    const third = await assessOk(key, await proven(agent));
    expect(third.decision).toBe("review");
    expect(third.outcome.outcome.reason).toBe('Review: policy rule "third" matched.');
  });

  it("sums per principal across its agents, in the request's currency", async () => {
    const { org, key, holder } = await provenAgentOrg();
    const principalId = await newPrincipal(org);
    const first = await holder({ principal_id: principalId });
    const sibling = await holder({ principal_id: principalId });
    const stranger = await holder();
    await createPolicy(org, {
      grammar: 1,
      rules: [{ id: "principal-cap", action: "deny", when: c("sum.principal.1d", "gte", 30_000) }],
    });
    const usd = (amount: number) => ({ payment_amount: { amount, currency: "USD" } });
    expect((await assessOk(key, await proven(first, usd(19_900)))).decision).toBe("approve");
    // Another currency does not add to a USD sum, another principal's agent not at all.
    await assessOk(
      key,
      await proven(first, { payment_amount: { amount: 50_000, currency: "EUR" } }),
    );
    expect((await assessOk(key, await proven(stranger, usd(19_900)))).decision).toBe("approve");
    expect((await assessOk(key, await proven(sibling, usd(5_000)))).decision).toBe("approve");
    // 19900 + 5000 = 24900 before it: under 30000.
    expect((await assessOk(key, await proven(sibling, usd(100)))).decision).toBe("approve");
    // 25000 before it: still under; then 30000 is reached.
    await assessOk(key, await proven(first, usd(5_000)));
    const over = await assessOk(key, await proven(sibling, usd(100)));
    expect(over.decision).toBe("deny");
    expect(reasonKeys(over.outcome)).toEqual(["policy_rule_denied"]);
  });

  it("counts per payee across the org's agents", async () => {
    const { org, key, body, holder } = await provenAgentOrg();
    const a = { body };
    const b = await holder();
    await createPolicy(org, {
      grammar: 1,
      rules: [{ id: "hot-payee", action: "review", when: c("count.payee.1h", "gte", 2) }],
    });
    const to = (payee: string) => ({ payee: { id: payee, name: payee } });
    expect((await assessOk(key, await proven(a, to("m-hot")))).decision).toBe("approve");
    expect((await assessOk(key, await proven(b, to("m-hot")))).decision).toBe("approve");
    expect((await assessOk(key, await proven(a, to("m-cold")))).decision).toBe("approve");
    expect((await assessOk(key, await proven(b, to("m-hot")))).decision).toBe("review");
  });

  it("an aggregate of an unidentified agent is unknown: the rule does not match", async () => {
    const { org, key } = await orgWithKey();
    await createPolicy(org, {
      grammar: 1,
      rules: [
        { id: "never-unknown", action: "deny", when: { not: c("count.agent.1h", "gte", 0) } },
      ],
    });
    const body = await assessOk(key, { mandate: payment() });
    expect(body.decision).toBe("review");
    expect(reasonKeys(body.outcome)).toEqual([]);
  });

  it("an approve rule never overrules doubt about who acts; a later rule still gets its turn", async () => {
    const { org, key } = await orgWithKey();
    const agent = await agentOf(org);
    await createPolicy(org, {
      grammar: 1,
      rules: [
        { id: "small-ok", action: "approve", when: c("amount", "lt", 50_000) },
        { id: "blocked", action: "deny", when: c("payee.id", "eq", "merchant_blocked") },
      ],
    });
    // Unidentified: the model's review stands, and the approve rule is not reported.
    const anonymous = await assessOk(key, { mandate: payment() });
    expect(anonymous.decision).toBe("review");
    expect(anonymous.outcome.outcome.risk_score).toBeGreaterThanOrEqual(40);
    expect(anonymous.outcome.outcome.reason).not.toContain("small-ok");
    // A card reference that matches no card: not approved by the rule either.
    const unknownCard = await assessOk(key, {
      mandate: payment(),
      agent_id: agent.id,
      a2a: { agent_card_ref: `sha256:${"0".repeat(64)}` },
    });
    expect(unknownCard.outcome.outcome.reason).not.toContain("small-ok");
    // The approve rule passed over, the deny rule after it still decides.
    const blocked = await assessOk(key, {
      mandate: payment({ payee: { id: "merchant_blocked", name: "Blocked" } }),
    });
    expect(blocked.decision).toBe("deny");
    expect(blocked.outcome.outcome.reason).toBe('Denied: policy rule "blocked" matched.');
  });

  it("an approve rule lowers a review band to approve, the score capped below review", async () => {
    const { org, key, body } = await provenAgentOrg();
    const agent = { body };
    // Without a rule, the eleventh quick payment of one proven agent, to a payee it never paid,
    // is reviewed (activity_burst with payee_first_seen: a proven agent's own trust is higher
    // than a claim's, so the burst alone would no longer reach the review band).
    const newPayee = (i: number) => ({ payee: { id: `m-new-${i}`, name: `Payee ${i}` } });
    const trial = await provenAgentOrg();
    let last: Json = {};
    for (let i = 0; i < 11; i++) last = await assessOk(trial.key, await proven(trial, newPayee(i)));
    expect(last.decision).toBe("review");
    await createPolicy(org, {
      grammar: 1,
      rules: [{ id: "routine", action: "approve", when: c("amount", "lt", 50_000) }],
    });
    for (let i = 0; i < 10; i++) await assessOk(key, await proven(agent, newPayee(i)));
    const approved = await assessOk(key, await proven(agent, newPayee(10)));
    expect(approved.decision).toBe("approve");
    expect(approved.outcome.outcome.risk_score).toBe(39);
    expect(approved.outcome.outcome.reason).toBe('Approved: policy rule "routine" matched.');
    // The model's signals stay in the outcome.
    expect(approved.outcome.signals.map((s: Json) => s.type)).toContain("activity_burst");
  });

  it("stored rules that no longer compile fault the policy stage: review, never a 500", async () => {
    const { org, key } = await orgWithKey();
    const agent = await agentOf(org);
    const policy = await createPolicy(org, {
      grammar: 1,
      rules: [{ id: "fine", action: "deny", when: c("amount", "gt", 1_000_000) }],
    });
    // As if the grammar had moved on under a stored policy: an attribute it no longer knows.
    await ownerSql`update policies set rules = jsonb_set(rules, '{rules,0,when,attr}', '"gone.attr"')
      where id = ${policy.id}`;
    const body = await assessOk(key, pay(agent.id));
    expect(body.decision).toBe("review");
    expect(body.outcome.signals.map((s: Json) => s.type)).toContain("policy_fault");
  });

  it("records the inputs the model read, for backtests", async () => {
    const { org, key } = await orgWithKey();
    const agent = await agentOf(org);
    const body = await assessOk(key, pay(agent.id));
    const [row] =
      (await ownerSql`select inputs from assessments where id = ${body.assessmentId}`) as {
        inputs: Json;
      }[];
    expect(row?.inputs).toMatchObject({
      v: 1,
      mandate_type: "payment",
      facts: { amount: { amount: 19_900, currency: "USD" }, payee: { id: "merchant_1" } },
      identity: { agent: { id: agent.id }, method: "explicit", conflict: false },
      history: { burst: 0, approvedCount: 0, payeeSeen: false },
      geo: null,
    });
    expect(row?.inputs.now).toBe(Date.parse(body.outcome.created));
    expect(row?.inputs.facts).not.toHaveProperty("riskData");
    expect(row?.inputs.history).not.toHaveProperty("windowCount");
  });
});
