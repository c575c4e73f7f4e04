import { describe, expect, it } from "vitest";
import { call } from "./support/api";
import { assessOk, createPolicy, type Json, orgWithKey } from "./support/assess";
import { newAgent } from "./support/identity";
import { clock, DAY, fraudInHistory, model, moveClock, paymentTo, T0 } from "./support/models";

// docs/rules.md (Backtest) and docs/risk-model.md: a backtest replays a risk model beside the
// policy, as the behaviour stage of each payment, from the payment history and the labels known
// at each assessment's time (the hand-built model of support/models.ts: a payee with a known
// fraud is a fraud, p = 0.9526 → deny; any other payment p = 0.0474).

async function setUp() {
  const { org, key } = await orgWithKey("test");
  const agentId = (await newAgent(org)).id as string;
  const policy = await createPolicy(org, { max_amount: 10_000_000 }, { activate: false });
  return { org, key, agentId, policyId: policy.id as string };
}

function backtest(key: string, policyId: string, body: Json) {
  return call(`/v1/policies/${policyId}/backtest`, { method: "POST", key, raw: true, body });
}

describe("POST /v1/policies/{id}/backtest with risk_model", () => {
  it("replays the model over each payment with the labels known then", async () => {
    const { org, key, agentId, policyId } = await setUp();
    const fraudulent = `payee-${crypto.randomUUID()}`;
    const later = `payee-${crypto.randomUUID()}`;
    // Known before the assessments below, and known only after them.
    await fraudInHistory(org.id, agentId, fraudulent, T0 - 3 * DAY, T0);
    await fraudInHistory(org.id, agentId, later, T0 - 3 * DAY, T0 + 5 * DAY);
    const at = await clock(org.id, T0 + DAY);
    // Assessed with no model (the hand-weighted score): the agent paid the first two payees
    // before (history), so 25 points, approve; merchant_1 is a first payee, 40, review.
    const known = await assessOk(key, paymentTo(fraudulent, agentId, at) as never);
    const unknown = await assessOk(key, paymentTo(later, agentId, at) as never);
    await moveClock(at, T0 + 6 * DAY);
    const clean = await assessOk(key, paymentTo("merchant_1", agentId, at) as never);
    expect([known, unknown, clean].map((a) => a.outcome.outcome.decision)).toEqual([
      "approve",
      "approve",
      "review",
    ]);

    const modelId = await model(org.id, false, "ready");
    const res = await backtest(key, policyId, { risk_model: modelId });
    expect(res.status).toBe(200);
    expect(res.json.risk_model).toEqual({ id: modelId, status: "ready", version: null });
    expect(res.json.replayed).toBe(3);
    // The model's score for p = 0.0474 is 6, plus 5 for decoded JSON: approve; for the payee
    // with a fraud known by then, p = 0.9526: deny. The fraud known only later counts for none.
    expect(res.json.matrix.approve).toEqual({ approve: 1, review: 0, deny: 1 });
    expect(res.json.matrix.review).toEqual({ approve: 1, review: 0, deny: 0 });
    const replayed = Object.fromEntries(
      res.json.samples.map((x: Json) => [x.assessment_id, x.replayed_decision]),
    );
    expect(replayed).toEqual({ [known.outcome.id]: "deny", [clean.outcome.id]: "approve" });

    // The same policy without the model: nothing changes.
    const plain = await backtest(key, policyId, {});
    expect(plain.json.risk_model).toBeNull();
    expect(plain.json.changed).toBe(0);
    expect(plain.json.matrix.review).toEqual({ approve: 0, review: 1, deny: 0 });
  });

  it("names only a model of the key's mode with parameters", async () => {
    const { org, key, policyId } = await setUp();
    const live = await model(org.id, true, "ready");
    expect((await backtest(key, policyId, { risk_model: live })).status).toBe(404);
    const other = await orgWithKey("test");
    const theirs = await model(other.org.id, false, "ready");
    expect((await backtest(key, policyId, { risk_model: theirs })).status).toBe(404);
    const training = await model(org.id, false, "training");
    const res = await backtest(key, policyId, { risk_model: training });
    expect(res.status).toBe(400);
    expect(res.json).toMatchObject({
      error: "invalid_request",
      details: [{ path: "risk_model", message: "the model has no parameters (status training)" }],
    });
    const malformed = await backtest(key, policyId, { risk_model: "not-a-uuid" });
    expect(malformed.status).toBe(400);
  });
});
