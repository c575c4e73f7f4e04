import { describe, expect, it } from "vitest";
import {
  assess,
  assessOk,
  createPolicy,
  decodeJwsPart,
  type Json,
  orgWithKey,
  reasonKeys,
} from "./support/assess";
import { ownerSql } from "./support/db";
import { newAgent } from "./support/identity";
import { clock, DAY, fraudInHistory, model, moveClock, paymentTo, T0 } from "./support/models";

// The learned model and the test clock on POST /v1/assess (issue 39; docs/risk-model.md, "The
// learned model", docs/history.md, "Test clocks"): the active model of the key's mode scores
// every payment from the history the context read returns, a label counts only from when it
// was known, and a test clock's time is the assessment's time.

/** The Outcome of an assessment that must answer 200. */
async function assessed(key: string, body: Json): Promise<Json> {
  return (await assessOk(key, body as never)).outcome as Json;
}

async function testOrg() {
  const { org, key } = await orgWithKey("test");
  const agent = await newAgent(org);
  return { org, key, agentId: agent.id as string };
}

describe("the active learned model", () => {
  it("scores a payment, and a fraud label counts only from when it was known", async () => {
    const { org, key, agentId } = await testOrg();
    const modelId = await model(org.id, false, "active");
    const payee = `payee-${crypto.randomUUID()}`;
    // Paid at T0, known to be a fraud a week later.
    await fraudInHistory(org.id, agentId, payee, T0, T0 + 7 * DAY);
    const at = await clock(org.id, T0 + 6 * DAY);

    const before = await assessed(key, paymentTo(payee, agentId, at));
    expect(before.created).toBe(new Date(T0 + 6 * DAY).toISOString());
    expect(before.outcome.model).toEqual({ id: modelId, version: 1, probability: 0.0474 });
    expect(before.outcome.decision).not.toBe("deny");
    expect(before.signals.map((s: Json) => s.type)).not.toContain("model_payee_fraud");
    const claims = decodeJwsPart(before.risk_payload.jws.split(".")[1]);
    expect(claims.iat).toBe(Math.floor((T0 + 6 * DAY) / 1000));

    await moveClock(at, T0 + 8 * DAY);
    const after = await assessed(key, paymentTo(payee, agentId, at));
    expect(after.created).toBe(new Date(T0 + 8 * DAY).toISOString());
    expect(after.outcome.model).toEqual({ id: modelId, version: 1, probability: 0.9526 });
    expect(after.outcome.decision).toBe("deny");
    expect(after.outcome.risk_score).toBeGreaterThanOrEqual(70);
    expect(after.signals).toContainEqual({
      category: "recipient",
      type: "model_payee_fraud",
      severity: "critical",
    });
  });

  it("does not see history after the test clock's time", async () => {
    const { org, key, agentId } = await testOrg();
    await model(org.id, false, "active");
    const payee = `payee-${crypto.randomUUID()}`;
    // A fraud paid after the clock's time, known before it: it has not happened yet.
    await fraudInHistory(org.id, agentId, payee, T0 + 2 * DAY, T0);
    const at = await clock(org.id, T0 + DAY);
    const outcome = await assessed(key, paymentTo(payee, agentId, at));
    expect(outcome.outcome.model.probability).toBe(0.0474);
  });

  it("is absent without an active model of the key's mode: a live model never scores test traffic", async () => {
    const { org, key, agentId } = await testOrg();
    await model(org.id, true, "active");
    const outcome = await assessed(key, paymentTo("merchant_1", agentId));
    expect(outcome.outcome).not.toHaveProperty("model");
  });

  it("records a shadow model's would-be answer, never in the Outcome", async () => {
    const { org, key, agentId } = await testOrg();
    const shadowId = await model(org.id, false, "shadow");
    const payee = `payee-${crypto.randomUUID()}`;
    await fraudInHistory(org.id, agentId, payee, T0, T0 + DAY);
    const at = await clock(org.id, T0 + 2 * DAY);
    const outcome = await assessed(key, paymentTo(payee, agentId, at));
    expect(outcome.outcome).not.toHaveProperty("model");
    const [row] = await ownerSql`select shadow_model from assessments where id = ${outcome.id}`;
    expect(row?.shadow_model).toMatchObject({
      id: shadowId,
      version: null,
      probability: 0.9526,
      decision: "deny",
    });
  });
});

describe("test_clock on POST /v1/assess", () => {
  it("is refused for a live key", async () => {
    const { org, key } = await orgWithKey("live");
    const agent = await newAgent(org);
    const at = await clock(org.id, T0);
    const res = await assess(key, paymentTo("merchant_1", agent.id, at) as never);
    expect(res.status).toBe(400);
    expect(res.error).toMatchObject({
      error: "invalid_request",
      details: [{ path: "test_clock", message: "test clocks are for test keys only" }],
    });
  });

  it("names no clock of another org: 400", async () => {
    const { agentId, key } = await testOrg();
    const other = await orgWithKey("test");
    const theirs = await clock(other.org.id, T0);
    const res = await assess(key, paymentTo("merchant_1", agentId, theirs) as never);
    expect(res.status).toBe(400);
    expect(res.error).toMatchObject({
      error: "invalid_request",
      details: [{ path: "test_clock", message: "no such test clock" }],
    });
  });

  it("ends every window at the clock's time: velocity counts what happened in the hour before it", async () => {
    const { org, key, agentId } = await testOrg();
    await createPolicy(org, { velocity: { window: "1h", max: 1 } });
    const at = await clock(org.id, T0);
    const first = await assessed(key, paymentTo("merchant_1", agentId, at));
    expect(first.created).toBe(new Date(T0).toISOString());
    expect(reasonKeys(first)).not.toContain("velocity_exceeded");
    const [row] =
      await ownerSql`select occurred_at from payments where assessment_id = ${first.id}`;
    expect(new Date(row?.occurred_at as string).toISOString()).toBe(new Date(T0).toISOString());
    // Within the hour of the clock's time: the second is one too many.
    await moveClock(at, T0 + 30 * 60_000);
    expect(reasonKeys(await assessed(key, paymentTo("merchant_1", agentId, at)))).toContain(
      "velocity_exceeded",
    );
    // Two hours on, the window is empty again, whatever the wall clock says.
    await moveClock(at, T0 + 2 * 3_600_000);
    expect(reasonKeys(await assessed(key, paymentTo("merchant_1", agentId, at)))).not.toContain(
      "velocity_exceeded",
    );
    // And a clock before them sees none of them: they have not happened yet.
    const earlier = await clock(org.id, T0 - 3_600_000);
    expect(
      reasonKeys(await assessed(key, paymentTo("merchant_1", agentId, earlier))),
    ).not.toContain("velocity_exceeded");
  });
});
