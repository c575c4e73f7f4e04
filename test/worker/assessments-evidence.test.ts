import { describe, expect, it } from "vitest";
import { call, newOrg, type TestOrg } from "./support/api";
import { assessOk, createPolicy, type Json, payment } from "./support/assess";
import { errorBody } from "./support/errors";
import { newAgent } from "./support/identity";

// docs/reviews.md, "Evidence": GET /v1/assessments/{id}/evidence. The auth and scope checks
// every route gets are in common-routes-*.test.ts.

const HOUR = 3_600_000;
const PAYEE = { id: "merchant_evidence", name: "Evidence Books" };
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ago = (hours: number) => new Date(Date.now() - hours * HOUR).toISOString();

function record(agentId: string, id: string, amount: number, hoursAgo: number, label?: Json) {
  return {
    id,
    occurred_at: ago(hoursAgo),
    agent_id: agentId,
    payee: PAYEE,
    amount: { amount, currency: "USD" },
    ...(label ? { label } : {}),
  };
}

async function importHistory(key: string, records: Json[]) {
  const res = await call("/v1/history/transactions", {
    method: "POST",
    key,
    raw: true,
    body: { records },
  });
  expect(res.status).toBe(201);
}

/** A payment of the agent to PAYEE: a `review` from 5000 up (the org's one rule). */
function pay(key: string, agentId: string, amount: number) {
  return assessOk(key, {
    mandate: payment({ payee: PAYEE, payment_amount: { amount, currency: "USD" } }),
    agent_id: agentId,
  });
}

function evidence(id: string, credential: { key?: string; token?: string }) {
  return call(`/v1/assessments/${id}/evidence`, { ...credential, raw: true });
}

/**
 * An org whose agent paid PAYEE three times (imported, one labeled legitimate), whose other
 * agent paid it three times (a chargeback and a fraud known, a fraud not known yet: its
 * `labeled_at` is ahead of the clock), then the agent's 5000 payment (a review) and, after
 * it, a 1000 one.
 */
async function seeded(org: TestOrg) {
  const { key } = await org.key();
  await createPolicy(org, {
    grammar: 1,
    rules: [{ id: "big", action: "review", when: { attr: "amount", op: "gte", value: 5_000 } }],
  });
  const agent = await newAgent(org);
  const other = await newAgent(org);
  const mine = [
    record(agent.id, "a1", 1_200, 30),
    record(agent.id, "a2", 2_500, 20),
    record(agent.id, "a3", 1_800, 10, { label: "legitimate", labeled_at: ago(1) }),
  ];
  await importHistory(key, [
    ...mine,
    record(other.id, "o1", 9_900, 40, { label: "chargeback", labeled_at: ago(5) }),
    record(other.id, "o2", 9_900, 35, { label: "fraud", labeled_at: ago(2) }),
    record(other.id, "o3", 9_900, 34, {
      label: "fraud",
      labeled_at: new Date(Date.now() + 4 * 60_000).toISOString(),
    }),
  ]);
  const reviewed = await pay(key, agent.id, 5_000);
  expect(reviewed.decision, JSON.stringify(reviewed.outcome)).toBe("review");
  const later = await pay(key, agent.id, 1_000);
  expect(later.decision).toBe("approve");
  return { key, agent, mine, reviewed, later };
}

describe("GET /v1/assessments/{id}/evidence", () => {
  it("answers the agent's payments up to this one, its payments to the payee and the payee's known labels", async () => {
    const org = await newOrg();
    const { key, agent, mine, reviewed } = await seeded(org);
    const res = await evidence(reviewed.assessmentId, { key });
    expect(res.status).toBe(200);
    expect(res.json).toEqual({
      object: "assessment_evidence",
      assessment_id: reviewed.assessmentId,
      livemode: true,
      agent_id: agent.id,
      // Oldest first, up to and including this one: the later 1000 is not there.
      agent_history: [
        ...mine.map((r) => ({
          id: expect.stringMatching(UUID),
          created: r.occurred_at,
          amount: r.amount.amount,
          currency: "USD",
          decision: null,
          current: false,
        })),
        {
          id: reviewed.assessmentId,
          created: reviewed.outcome.created,
          amount: 5_000,
          currency: "USD",
          decision: "review",
          current: true,
        },
      ],
      agent_payee_payments: 3,
      payee_labels: {
        fraud: 1, // o3's fraud is not known yet
        dispute: 0,
        chargeback: 1,
        refund: 0,
        legitimate: 1,
        latest_label: "legitimate",
        latest_at: mine[2]?.label?.labeled_at,
      },
      // None recorded (test/worker/payment-receipts.test.ts records some).
      payment_receipts: [],
    });
  });

  it("counts the later payment's earlier payments to the payee, this one included", async () => {
    const org = await newOrg();
    const { key, later, reviewed } = await seeded(org);
    const res = await evidence(later.assessmentId, { token: org.token });
    expect(res.status).toBe(200);
    expect(res.json.agent_payee_payments).toBe(4);
    expect(res.json.agent_history.map((p: Json) => [p.amount, p.current])).toEqual([
      [1_200, false],
      [2_500, false],
      [1_800, false],
      [5_000, false],
      [1_000, true],
    ]);
    expect(res.json.agent_history[3]?.id).toBe(reviewed.assessmentId);
    // A session and a key of the org read the same evidence.
    expect((await evidence(later.assessmentId, { key })).json).toEqual(res.json);
  });

  it("answers no history and no payee counts for an assessment without an agent", async () => {
    const org = await newOrg();
    const { key } = await org.key();
    const made = await assessOk(key, { mandate: payment({ payee: PAYEE }) });
    const res = await evidence(made.assessmentId, { key });
    expect(res.status).toBe(200);
    expect(res.json).toEqual({
      object: "assessment_evidence",
      assessment_id: made.assessmentId,
      livemode: true,
      agent_id: null,
      agent_history: [],
      agent_payee_payments: null,
      payee_labels: {
        fraud: 0,
        dispute: 0,
        chargeback: 0,
        refund: 0,
        legitimate: 0,
        latest_label: null,
        latest_at: null,
      },
      payment_receipts: [],
    });
  });

  it("keeps test and live apart: each mode reads its own history, the other mode's id is 404", async () => {
    const org = await newOrg();
    const { agent, reviewed } = await seeded(org);
    const { key: testKey } = await org.key(undefined, "test");
    const test = await pay(testKey, agent.id, 5_000);
    const res = await evidence(test.assessmentId, { key: testKey });
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({
      livemode: false,
      agent_payee_payments: 0,
      payee_labels: { fraud: 0, chargeback: 0, legitimate: 0, latest_label: null },
    });
    expect(res.json.agent_history.map((p: Json) => p.id)).toEqual([test.assessmentId]);
    const crossed = await evidence(reviewed.assessmentId, { key: testKey });
    expect(crossed.status).toBe(404);
    expect(crossed.json).toEqual(errorBody("not_found"));
    const session = await call(`/v1/assessments/${test.assessmentId}/evidence`, {
      token: org.token,
      raw: true,
    });
    expect(session.status).toBe(404);
  });

  it("answers 404 for another org's assessment, an unknown id and a malformed one", async () => {
    const org = await newOrg();
    const { reviewed } = await seeded(org);
    const stranger = await newOrg();
    const { key } = await stranger.key();
    for (const id of [reviewed.assessmentId, crypto.randomUUID(), "not-an-id"]) {
      const res = await evidence(id, { key });
      expect(res.status).toBe(404);
      expect(res.json).toEqual(errorBody("not_found"));
    }
  });
});
