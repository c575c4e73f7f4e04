import { describe, expect, it } from "vitest";
import { policyCacheStats } from "../../src/assess/policy-cache";
import { call } from "./support/api";
import {
  assessOk,
  createPolicy,
  type Json,
  orgWithKey,
  payment,
  reasonKeys,
} from "./support/assess";
import { provenAgentOrg } from "./support/credentials";

// docs/latency.md (Cutting the path): the active policy is parsed once per (id, version) in
// the isolate, not once per assessment. The tests share the isolate with the Worker (the pool
// runs both in one workerd isolate), so they read the same module's counter the Worker bumps.

async function setup() {
  const { org, key, body } = await provenAgentOrg();
  const pay = () => body({ payment_amount: { amount: 19_900, currency: "USD" } });
  return { org, key, pay };
}

function parses(): number {
  return policyCacheStats().parses;
}

describe("the parsed-policy cache", () => {
  it("parses a version once and reuses the parse for the next assessments", async () => {
    const { org, key, pay } = await setup();
    await createPolicy(org, { max_amount: 100 });
    const before = parses();
    const first = await assessOk(key, await pay());
    expect(reasonKeys(first.outcome)).toContain("max_amount_exceeded");
    expect(parses()).toBe(before + 1);
    const second = await assessOk(key, await pay());
    const third = await assessOk(key, await pay());
    expect(reasonKeys(second.outcome)).toContain("max_amount_exceeded");
    expect(reasonKeys(third.outcome)).toContain("max_amount_exceeded");
    expect(parses()).toBe(before + 1);
  });

  it("picks up a new version at the next assessment", async () => {
    const { org, key, pay } = await setup();
    await createPolicy(org, { max_amount: 100 });
    const denied = await assessOk(key, await pay());
    expect(denied.decision).toBe("deny");
    expect(denied.outcome.outcome.policy_version).toBe(1);
    const before = parses();
    await createPolicy(org, { max_amount: 1_000_000 });
    const allowed: Json = await assessOk(key, await pay());
    expect(allowed.outcome.outcome.policy_version).toBe(2);
    expect(reasonKeys(allowed.outcome)).not.toContain("max_amount_exceeded");
    expect(allowed.decision).toBe("approve");
    expect(parses()).toBe(before + 1);
  });

  it("a policy activated again gets a new version, parsed again; its rules are the same", async () => {
    const { org, key, pay } = await setup();
    const strict = await createPolicy(org, { max_amount: 100 });
    await createPolicy(org, {});
    await assessOk(key, await pay());
    const back = await call(`/v1/policies/${strict.id}/activate`, {
      method: "POST",
      token: org.token,
    });
    expect(back.json.version).toBe(3);
    const before = parses();
    const body = await assessOk(key, await pay());
    expect(body.outcome.outcome.policy_version).toBe(3);
    expect(reasonKeys(body.outcome)).toContain("max_amount_exceeded");
    expect(parses()).toBe(before + 1);
  });

  it("backtests and evaluations read a policy through the cache: one parse for all their runs", async () => {
    const { org } = await orgWithKey();
    const rules = {
      grammar: 1,
      rules: [{ id: "big", action: "deny", when: { attr: "amount", op: "gte", value: 100_000 } }],
    };
    const draft = await createPolicy(org, rules, { activate: false });
    const cases = [
      {
        id: "c1",
        request: { mandate: payment({ payment_amount: { amount: 150_000, currency: "USD" } }) },
        context: { agent: { trust_score: 100, identified_by: "key" } },
        expected: "deny",
      },
    ];
    const set = await call("/v1/eval-sets", {
      method: "POST",
      token: org.token,
      raw: true,
      body: { name: "one", cases },
    });
    expect(set.status).toBe(201);
    const backtest = () =>
      call(`/v1/policies/${draft.id}/backtest`, { method: "POST", token: org.token, body: {} });
    const evaluate = () =>
      call("/v1/evals/run", {
        method: "POST",
        token: org.token,
        body: { eval_set_id: set.json.id, policy_id: draft.id },
      });
    const before = parses();
    const first = await backtest();
    expect(first.status).toBe(200);
    expect(parses()).toBe(before + 1);
    const second = await backtest();
    expect(second.status).toBe(200);
    expect(second.json.policy).toEqual(first.json.policy);
    const scored = await evaluate();
    expect(scored.status).toBe(201);
    expect(scored.json.confusion.decisions.deny.deny).toBe(1);
    expect((await evaluate()).json.metrics).toEqual(scored.json.metrics);
    expect(parses()).toBe(before + 1);
  });
});
