import { describe, expect, it } from "vitest";
import { call, type TestOrg } from "./support/api";
import { assessOk, createPolicy, type Json, orgWithKey } from "./support/assess";
import { provenAgentOrg } from "./support/credentials";
import { ownerSql } from "./support/db";
import { errorBody } from "./support/errors";
import { assessOnce } from "./support/routes";

// docs/feedback.md: labels on assessments, their effective label, and agent trust.

const c = (attr: string, op: string, value: unknown) => ({ attr, op, value });

function label(key: string, assessmentId: string, body: Json, headers?: Record<string, string>) {
  return call(`/v1/assessments/${assessmentId}/feedback`, {
    method: "POST",
    key,
    raw: true,
    body,
    ...(headers ? { headers } : {}),
  });
}

function labels(key: string, assessmentId: string) {
  return call(`/v1/assessments/${assessmentId}/feedback`, { key });
}

async function agentTrust(org: TestOrg, agentId: string) {
  const agent = await call(`/v1/agents/${agentId}`, { token: org.token });
  const history = await call(`/v1/agents/${agentId}/trust-history?limit=100`, {
    token: org.token,
  });
  return {
    score: agent.json.trust_score as number,
    evidence: agent.json.evidence as Json,
    reasons: history.json.data.map((e) => e.reason as string),
  };
}

async function keyed(org: TestOrg) {
  const made = await org.key(["assess:write", "assess:read"]);
  return { keyId: made.id, key: made.key };
}

describe("POST /v1/assessments/{id}/feedback", () => {
  it("records a label, audited, and answers the feedback object", async () => {
    const { org } = await orgWithKey();
    const { keyId, key } = await keyed(org);
    const { assessmentId } = await assessOnce(org);
    const res = await label(key, assessmentId, {
      label: "chargeback",
      occurred_at: "2026-01-02T03:04:05.678Z",
      source: "stripe_dispute",
      note: "cardholder says not me",
    });
    expect(res.status).toBe(201);
    expect(res.json).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      object: "assessment_feedback",
      assessment_id: assessmentId,
      livemode: true,
      label: "chargeback",
      occurred_at: "2026-01-02T03:04:05.678Z",
      source: "stripe_dispute",
      note: "cardholder says not me",
      created: expect.any(String),
      created_by: { type: "api_key", id: keyId },
    });
    const entries = await ownerSql`select type, actor_type, actor_id, subject_type
      from audit_entries where org_id = ${org.id} and subject_id = ${res.json.id}`;
    expect(entries).toEqual([
      {
        type: "assessment.feedback_added",
        actor_type: "api_key",
        actor_id: keyId,
        subject_type: "assessment_feedback",
      },
    ]);
  });

  it("takes several labels per assessment, each audited, and lists them oldest first", async () => {
    const { org } = await orgWithKey();
    const { key } = await keyed(org);
    const { assessmentId } = await assessOnce(org);
    const dispute = await label(key, assessmentId, { label: "dispute" });
    const pending = await labels(key, assessmentId);
    expect(pending.status).toBe(200);
    expect(pending.json).toMatchObject({
      object: "list",
      has_more: false,
      next_cursor: null,
      effective_label: null,
      pending: true,
    });
    const fraud = await label(key, assessmentId, { label: "fraud" });
    // A refund that happened before the fraud was confirmed does not supersede it.
    const refund = await label(key, assessmentId, {
      label: "refund",
      occurred_at: new Date(Date.now() - 86_400_000).toISOString(),
    });
    const list = await labels(key, assessmentId);
    expect(list.json.data.map((f: Json) => f.id)).toEqual([
      dispute.json.id,
      fraud.json.id,
      refund.json.id,
    ]);
    expect(list.json).toMatchObject({ effective_label: "fraud", pending: false });
    const [count] = await ownerSql`select count(*)::int as n from audit_entries
      where org_id = ${org.id} and type = 'assessment.feedback_added'`;
    expect(count).toEqual({ n: 3 });
  });

  it("answers a retry with the same Idempotency-Key with the first label, written once", async () => {
    const { org } = await orgWithKey();
    const { key } = await keyed(org);
    const { assessmentId } = await assessOnce(org);
    const headers = { "idempotency-key": `fb-${crypto.randomUUID()}` };
    const first = await label(key, assessmentId, { label: "fraud" }, headers);
    const again = await label(key, assessmentId, { label: "fraud" }, headers);
    expect(first.status).toBe(201);
    expect(again.status).toBe(200);
    expect(again.json).toEqual(first.json);
    expect((await labels(key, assessmentId)).json.data).toHaveLength(1);
  });

  it("refuses an Idempotency-Key already used on another assessment, writing nothing", async () => {
    const { org } = await orgWithKey();
    const { key } = await keyed(org);
    const first = await assessOnce(org);
    const second = await assessOnce(org);
    const headers = { "idempotency-key": `fb-${crypto.randomUUID()}` };
    expect((await label(key, first.assessmentId, { label: "fraud" }, headers)).status).toBe(201);
    const res = await label(key, second.assessmentId, { label: "fraud" }, headers);
    expect(res.status).toBe(400);
    expect(res.json).toEqual(
      errorBody("invalid_request", [
        { path: "idempotency-key", message: "was used to label another assessment" },
      ]),
    );
    expect((await labels(key, second.assessmentId)).json.data).toEqual([]);
  });

  it.each([
    [{ label: "stolen" }, "label"],
    [{}, "label"],
    [{ label: "fraud", occurred_at: "yesterday" }, "occurred_at"],
    [{ label: "fraud", note: "x".repeat(1001) }, "note"],
    [{ label: "fraud", source: "Has Spaces" }, "source"],
    [{ label: "fraud", extra: true }, ""],
  ])("refuses %j with 400 naming %s", async (body, path) => {
    const { org } = await orgWithKey();
    const { key } = await keyed(org);
    const { assessmentId } = await assessOnce(org);
    const res = await label(key, assessmentId, body);
    expect(res.status).toBe(400);
    expect(res.error.error).toBe("invalid_request");
    expect(res.error.details.map((d: Json) => d.path)).toContain(path);
    expect((await labels(key, assessmentId)).json.data).toEqual([]);
  });

  it("refuses an occurred_at in the future beyond five minutes", async () => {
    const { org } = await orgWithKey();
    const { key } = await keyed(org);
    const { assessmentId } = await assessOnce(org);
    const soon = new Date(Date.now() + 60_000).toISOString();
    expect((await label(key, assessmentId, { label: "fraud", occurred_at: soon })).status).toBe(
      201,
    );
    const later = new Date(Date.now() + 3_600_000).toISOString();
    const res = await label(key, assessmentId, { label: "fraud", occurred_at: later });
    expect(res.status).toBe(400);
    expect(res.json).toEqual(
      errorBody("invalid_request", [{ path: "occurred_at", message: "must not be in the future" }]),
    );
  });

  it("is a 404 for an assessment of the other mode and of another org", async () => {
    const { org } = await orgWithKey();
    const { assessmentId } = await assessOnce(org);
    const test = await org.key(["assess:write", "assess:read"], "test");
    expect((await label(test.key, assessmentId, { label: "fraud" })).status).toBe(404);
    expect((await labels(test.key, assessmentId)).status).toBe(404);
    const other = await orgWithKey();
    const res = await label(other.key, assessmentId, { label: "fraud" });
    expect(res).toMatchObject({ status: 404, json: { error: "not_found" } });
    const [count] = await ownerSql`select count(*)::int as n from assessment_feedback
      where assessment_id = ${assessmentId}`;
    expect(count).toEqual({ n: 0 });
  });
});

describe("feedback and agent trust", () => {
  it("a confirmed fraud lowers the agent's trust once, with a history entry naming the assessment", async () => {
    const { org, key, agentId, body } = await provenAgentOrg();
    const made = await assessOk(key, await body());
    expect(made.decision).toBe("approve");
    const before = await agentTrust(org, agentId);
    expect((await label(key, made.assessmentId, { label: "fraud" })).status).toBe(201);
    const after = await agentTrust(org, agentId);
    expect(after.score).toBe(before.score - 15);
    expect(after.evidence).toMatchObject({ confirmed_frauds: 1, confirmed_legitimate: 0 });
    expect(after.reasons[0]).toBe(`feedback.fraud:${made.assessmentId}`);
    // The same outcome again, or confirmed by its chargeback, moves nothing.
    await label(key, made.assessmentId, { label: "fraud" });
    await label(key, made.assessmentId, { label: "chargeback" });
    const again = await agentTrust(org, agentId);
    expect(again.score).toBe(after.score);
    expect(again.reasons).toEqual(after.reasons);
  });

  it("concurrent identical labels lower trust once", async () => {
    const { org, key, agentId, body } = await provenAgentOrg();
    const made = await assessOk(key, await body());
    const before = await agentTrust(org, agentId);
    const results = await Promise.all(
      [1, 2, 3].map(() => label(key, made.assessmentId, { label: "chargeback" })),
    );
    expect(results.map((r) => r.status)).toEqual([201, 201, 201]);
    const after = await agentTrust(org, agentId);
    expect(after.score).toBe(before.score - 15);
    expect(after.evidence.confirmed_frauds).toBe(1);
  });

  it("legitimate raises trust only on a reviewed assessment; dispute, refund never move it", async () => {
    const { org, key, agentId, body } = await provenAgentOrg();
    const approved = await assessOk(key, await body());
    for (const l of ["legitimate", "dispute", "refund"]) {
      await label(key, approved.assessmentId, { label: l });
    }
    const unmoved = await agentTrust(org, agentId);
    expect(unmoved.evidence).toMatchObject({ confirmed_frauds: 0, confirmed_legitimate: 0 });
    await createPolicy(org, {
      grammar: 1,
      rules: [{ id: "look", action: "review", when: c("amount", "gte", 1) }],
    });
    const reviewed = await assessOk(key, await body());
    expect(reviewed.decision).toBe("review");
    const before = await agentTrust(org, agentId);
    expect(before.score).toBe(unmoved.score);
    await label(key, reviewed.assessmentId, { label: "legitimate" });
    await label(key, reviewed.assessmentId, { label: "legitimate" });
    const after = await agentTrust(org, agentId);
    expect(after.score).toBe(before.score + 3);
    expect(after.evidence.confirmed_legitimate).toBe(1);
    expect(after.reasons[0]).toBe(`feedback.legitimate:${reviewed.assessmentId}`);
  });

  it("test-mode labels never move trust (agents are shared by both modes)", async () => {
    const { org, key, agentId, body } = await provenAgentOrg("test");
    const made = await assessOk(key, await body());
    const before = await agentTrust(org, agentId);
    expect((await label(key, made.assessmentId, { label: "fraud" })).status).toBe(201);
    const after = await agentTrust(org, agentId);
    expect(after).toEqual(before);
  });

  it("a label on an assessment that only claimed the agent does not move its trust", async () => {
    const { org, key, agentId } = await provenAgentOrg();
    const claimed = await assessOk(key, {
      mandate: {
        vct: "mandate.payment.1",
        transaction_id: crypto.randomUUID(),
        payee: { id: "merchant_1", name: "Demo Merchant" },
        payment_amount: { amount: 1000, currency: "USD" },
        payment_instrument: { id: "stub", type: "card" },
      },
      agent_id: agentId,
    });
    const before = await agentTrust(org, agentId);
    expect((await label(key, claimed.assessmentId, { label: "fraud" })).status).toBe(201);
    expect(await agentTrust(org, agentId)).toEqual(before);
  });
});
