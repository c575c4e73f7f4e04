import { describe, expect, it } from "vitest";
import { call, type TestOrg } from "./support/api";
import {
  assessOk,
  createPolicy,
  expectConsistentBand,
  type Json,
  openPayment,
  orgWithKey,
  payment,
  reasonKeys,
  signalTypes,
} from "./support/assess";
import { provenAgentOrg, type provenHolder } from "./support/credentials";

// Spec: "outcome.policy_version is an integer version of the policy applied"; docs/assess.md
// (Policy) and risk-model.md (Policy rules, Rejection reasons): any violation denies.

type Proven = Awaited<ReturnType<typeof provenHolder>>;

/**
 * An org, a key and an agent whose plain payment (19900 USD, new payee) is approved: the agent
 * proves itself with a verified credential (a claim by agent_id earns no trust, docs/assess.md).
 */
async function setup() {
  const { org, key, agentId, body, holder } = await provenAgentOrg();
  const agent = { id: agentId, body };
  return {
    org,
    key,
    agent,
    holder: async () => {
      const other = await holder();
      return { id: other.agentId, body: other.body };
    },
  };
}

/** A fresh verified presentation of the agent's payment, `changes` to the closed mandate. */
async function pay(agent: { body: Proven["body"] }, changes: Json = {}) {
  return await agent.body({ payment_amount: { amount: 19_900, currency: "USD" }, ...changes });
}

function expectDeniedBy(outcome: Json, key: string) {
  expect(outcome.outcome.decision).toBe("deny");
  const reason = outcome.rejection_reasons.find((r: Json) => r.key === key);
  expect(reason, `rejection reason ${key}`).toBeDefined();
  expect(reason.category).toBe("policy");
  expect(reason.description.length).toBeGreaterThan(0);
  expect(outcome.outcome.reason).toMatch(/^Denied: /);
  expect(outcome.confidences.policy_adherence).toBe(0);
  expectConsistentBand(outcome);
}

async function activateNew(org: TestOrg, rules: Json) {
  return createPolicy(org, rules, { activate: true });
}

describe("policy_version", () => {
  it("is 0 when the org has no active policy", async () => {
    const { key, agent } = await setup();
    const body = await assessOk(key, await pay(agent));
    expect(body.outcome.outcome.policy_version).toBe(0);
    expect(body.decision).toBe("approve");
  });

  it("a draft is not applied", async () => {
    const { org, key, agent } = await setup();
    await createPolicy(org, { max_amount: 1 }, { activate: false });
    const body = await assessOk(key, await pay(agent));
    expect(body.outcome.outcome.policy_version).toBe(0);
    expect(body.decision).toBe("approve");
  });

  it("follows each activation: 1, 2, and a new one when an old policy comes back", async () => {
    const { org, key, agent } = await setup();
    const a = await activateNew(org, {});
    expect((await assessOk(key, await pay(agent))).outcome.outcome.policy_version).toBe(1);
    await activateNew(org, { max_amount: 1_000_000 });
    expect((await assessOk(key, await pay(agent))).outcome.outcome.policy_version).toBe(2);
    const back = await call(`/v1/policies/${a.id}/activate`, { method: "POST", token: org.token });
    expect(back.json.version).toBe(3);
    const body = await assessOk(key, await pay(agent));
    expect(body.outcome.outcome.policy_version).toBe(3);
  });

  it("a replay answers the outcome of the policy that governed it", async () => {
    const { org, key, agent } = await setup();
    await activateNew(org, { max_amount: 100 });
    const request = await pay(agent);
    const first = await assessOk(key, request);
    expect(first.decision).toBe("deny");
    await activateNew(org, {});
    const again = await assessOk(key, request);
    expect(again).toEqual(first);
  });
});

describe("max_amount", () => {
  it("an amount above it: deny, max_amount_exceeded", async () => {
    const { org, key, agent } = await setup();
    await activateNew(org, { max_amount: 19899 });
    const body = await assessOk(key, await pay(agent));
    expectDeniedBy(body.outcome, "max_amount_exceeded");
    expect(body.outcome.outcome.policy_version).toBe(1);
  });

  it("an amount equal to it passes", async () => {
    const { org, key, agent } = await setup();
    await activateNew(org, { max_amount: 19900 });
    const body = await assessOk(key, await pay(agent));
    expect(reasonKeys(body.outcome)).not.toContain("max_amount_exceeded");
    expect(body.decision).toBe("approve");
  });

  it("an open mandate is checked by its ceiling", async () => {
    const { org, key } = await setup();
    await activateNew(org, { max_amount: 10000 });
    // The open payment mandate's amount range allows up to 20000 USD.
    const body = await assessOk(key, { mandate: openPayment() });
    expectDeniedBy(body.outcome, "max_amount_exceeded");
  });

  it("applies to custom actions that carry an amount", async () => {
    const { org, key, agent } = await setup();
    await activateNew(org, { max_amount: 100 });
    const body = await assessOk(key, {
      kind: "custom",
      mandate: { action: "refund", amount: { amount: 5000, currency: "EUR" } },
      agent_id: agent.id,
    });
    expectDeniedBy(body.outcome, "max_amount_exceeded");
  });

  it("does not apply to message_send", async () => {
    const { org, key, agent } = await setup();
    await activateNew(org, { max_amount: 1, currencies: ["EUR"] });
    const body = await assessOk(key, {
      kind: "message_send",
      mandate: { to: "+15551234567", amount: { amount: 5000, currency: "USD" } },
      agent_id: agent.id,
    });
    expect(reasonKeys(body.outcome)).not.toContain("max_amount_exceeded");
    expect(reasonKeys(body.outcome)).not.toContain("currency_not_allowed");
  });

  it("with no stated amount at all is the amount_unknown signal, never a silent pass", async () => {
    const { org, key, agent } = await setup();
    await activateNew(org, { max_amount: 100 });
    const body = await assessOk(key, {
      kind: "custom",
      mandate: { action: "something" },
      agent_id: agent.id,
    });
    expect(body.outcome.signals).toContainEqual({
      category: "policy",
      type: "amount_unknown",
      severity: "medium",
    });
  });
});

describe("currencies", () => {
  it("a currency not allowed: deny, currency_not_allowed", async () => {
    const { org, key, agent } = await setup();
    await activateNew(org, { currencies: ["EUR", "GBP"] });
    expectDeniedBy((await assessOk(key, await pay(agent))).outcome, "currency_not_allowed");
  });

  it("an allowed currency passes", async () => {
    const { org, key, agent } = await setup();
    await activateNew(org, { currencies: ["EUR", "USD"] });
    const body = await assessOk(key, await pay(agent));
    expect(body.decision).toBe("approve");
    expect(body.outcome.rejection_reasons).toEqual([]);
  });

  it("two violations are two reasons, one per key", async () => {
    const { org, key, agent } = await setup();
    await activateNew(org, { max_amount: 1, currencies: ["EUR"] });
    const body = await assessOk(key, await pay(agent));
    expect(reasonKeys(body.outcome).sort()).toEqual(
      ["currency_not_allowed", "max_amount_exceeded"].sort(),
    );
  });
});

describe("geo.allow", () => {
  it("risk_data.country outside the list: deny, geo_not_allowed", async () => {
    const { org, key, agent } = await setup();
    await activateNew(org, { geo: { allow: ["DE", "NL"] } });
    const body = await assessOk(key, await pay(agent, { risk_data: { country: "FR" } }));
    expectDeniedBy(body.outcome, "geo_not_allowed");
  });

  it("risk_data.geo.country is read too", async () => {
    const { org, key, agent } = await setup();
    await activateNew(org, { geo: { allow: ["DE"] } });
    const body = await assessOk(key, await pay(agent, { risk_data: { geo: { country: "FR" } } }));
    expectDeniedBy(body.outcome, "geo_not_allowed");
  });

  it("a listed country passes", async () => {
    const { org, key, agent } = await setup();
    await activateNew(org, { geo: { allow: ["DE", "NL"] } });
    const body = await assessOk(key, await pay(agent, { risk_data: { country: "NL" } }));
    expect(body.decision).toBe("approve");
  });

  it("an unknown country is the geo_unknown signal, never a silent pass", async () => {
    const { org, key, agent } = await setup();
    await activateNew(org, { geo: { allow: ["DE"] } });
    for (const changes of [{}, { risk_data: { country: "XX" } }, { risk_data: { country: 49 } }]) {
      const body = await assessOk(key, await pay(agent, changes));
      expect(body.outcome.signals).toContainEqual({
        category: "policy",
        type: "geo_unknown",
        severity: "medium",
      });
      expect(reasonKeys(body.outcome)).not.toContain("geo_not_allowed");
    }
  });

  it("without a geo rule the country does not matter", async () => {
    const { org, key, agent } = await setup();
    await activateNew(org, { max_amount: 1_000_000 });
    const body = await assessOk(key, await pay(agent, { risk_data: { country: "KP" } }));
    expect(body.decision).toBe("approve");
  });
});

describe("velocity", () => {
  it("window 1h, max 2: the third assessment of the agent is denied, velocity_exceeded", async () => {
    const { org, key, agent } = await setup();
    await activateNew(org, { velocity: { window: "1h", max: 2 } });
    const first = await assessOk(key, await pay(agent));
    const second = await assessOk(key, await pay(agent));
    expect(reasonKeys(first.outcome)).not.toContain("velocity_exceeded");
    expect(reasonKeys(second.outcome)).not.toContain("velocity_exceeded");
    expect(second.decision).toBe("approve");
    const third = await assessOk(key, await pay(agent));
    expectDeniedBy(third.outcome, "velocity_exceeded");
  });

  // Documented limit (docs/assess.md, Policy): velocity is counted from committed assessments,
  // so a burst of simultaneous requests can pass by up to the burst's size; once they are
  // committed, the next one is refused.
  it("after a simultaneous burst, the next assessment is refused", async () => {
    const { org, key, agent } = await setup();
    await activateNew(org, { velocity: { window: "1h", max: 2 } });
    await Promise.all(Array.from({ length: 4 }, async () => assessOk(key, await pay(agent))));
    const next = await assessOk(key, await pay(agent));
    expectDeniedBy(next.outcome, "velocity_exceeded");
  });

  it("counts only the acting agent's assessments", async () => {
    const { org, key, agent, holder } = await setup();
    const other = await holder();
    await activateNew(org, { velocity: { window: "1h", max: 1 } });
    await assessOk(key, await pay(agent));
    const body = await assessOk(key, await pay(other));
    expect(reasonKeys(body.outcome)).not.toContain("velocity_exceeded");
  });

  it("a replay is not counted as another assessment", async () => {
    const { org, key, agent } = await setup();
    await activateNew(org, { velocity: { window: "1h", max: 2 } });
    const request = await pay(agent);
    await assessOk(key, request);
    await assessOk(key, request);
    await assessOk(key, request);
    const second = await assessOk(key, await pay(agent));
    expect(reasonKeys(second.outcome)).not.toContain("velocity_exceeded");
  });

  it("counts assessments made before the policy was activated", async () => {
    const { org, key, agent } = await setup();
    await assessOk(key, await pay(agent));
    await assessOk(key, await pay(agent));
    await activateNew(org, { velocity: { window: "1h", max: 2 } });
    expectDeniedBy((await assessOk(key, await pay(agent))).outcome, "velocity_exceeded");
  });

  it("without an agent it cannot be counted: velocity_unknown", async () => {
    const { org, key } = await setup();
    await activateNew(org, { velocity: { window: "1h", max: 2 } });
    const body = await assessOk(key, { mandate: payment() });
    expect(signalTypes(body.outcome)).toContain("velocity_unknown");
  });
});

describe("the payee's history (risk-model.md: payee_first_seen)", () => {
  it("a first payment to a payee is payee_first_seen; an approved one makes it known", async () => {
    const { key, agent } = await setup();
    const first = await assessOk(key, await pay(agent));
    expect(first.decision).toBe("approve");
    expect(signalTypes(first.outcome)).toContain("payee_first_seen");
    const second = await assessOk(key, await pay(agent));
    expect(signalTypes(second.outcome)).not.toContain("payee_first_seen");
  });

  it("a denied attempt does not make the payee known", async () => {
    const { org, key, agent } = await setup();
    await activateNew(org, { max_amount: 100 });
    const denied = await assessOk(key, await pay(agent));
    expect(denied.decision).toBe("deny");
    await activateNew(org, {});
    const next = await assessOk(key, await pay(agent));
    expect(signalTypes(next.outcome)).toContain("payee_first_seen");
  });
});

describe("a policy in another organization", () => {
  it("never applies here", async () => {
    const other = await orgWithKey();
    await activateNew(other.org, { max_amount: 1 });
    const { key, agent } = await setup();
    const body = await assessOk(key, await pay(agent));
    expect(body.outcome.outcome.policy_version).toBe(0);
    expect(body.decision).toBe("approve");
  });
});
