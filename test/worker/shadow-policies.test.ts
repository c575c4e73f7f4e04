import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { call, type TestOrg } from "./support/api";
import {
  agentOf,
  assessOk,
  assessWith,
  createPolicy,
  decodeJwsPart,
  type Json,
  orgWithKey,
  payment,
} from "./support/assess";
import { ownerSql } from "./support/db";
import { errorBody } from "./support/errors";

// Shadow policies (docs/shadow-policies.md): one draft per org evaluated on every assessment
// next to the active policy, recorded with the assessment, never acted on, never signed.

const c = (attr: string, op: string, value: unknown) => ({ attr, op, value });

function shadow(org: TestOrg, id: string, method: "POST" | "DELETE" = "POST") {
  return call(`/v1/policies/${id}/shadow`, { method, token: org.token });
}

async function shadowOk(org: TestOrg, id: string) {
  const res = await shadow(org, id);
  expect(res.status).toBe(200);
  return res.json;
}

function activate(org: TestOrg, id: string) {
  return call(`/v1/policies/${id}/activate`, { method: "POST", token: org.token });
}

/** The stored shadow verdict and version of an assessment, read as an insider. */
async function stored(assessmentId: string) {
  const [row] = (await ownerSql`select shadow, policy_version, decision from assessments
    where id = ${assessmentId}`) as Json[];
  return row as { shadow: Json | null; policy_version: number; decision: string };
}

async function shadowFlags(orgId: string) {
  return (await ownerSql`select id from policies where org_id = ${orgId} and shadow
    order by id`) as { id: string }[];
}

async function policyEntries(orgId: string) {
  const rows = (await ownerSql`select type, subject_id from audit_entries
    where org_id = ${orgId} and type like 'policy.%shadow%' order by sequence`) as Json[];
  return rows.map((r) => `${r.type}:${r.subject_id}`);
}

/** An org whose active policy approves a 1000 USD payment, and a draft that would deny it. */
async function orgWithStricterDraft() {
  const { org, key } = await orgWithKey();
  const active = await createPolicy(org, { max_amount: 1_000_000 });
  const draft = await createPolicy(org, { max_amount: 500 }, { activate: false, name: "strict" });
  return { org, key, active, draft };
}

describe("POST /v1/policies/{id}/shadow", () => {
  it("marks a draft as the shadow policy: it stays a draft, with shadow true, audited once", async () => {
    const { org, draft } = await orgWithStricterDraft();
    const res = await shadow(org, draft.id);
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ ...draft, shadow: true });
    expect((await call(`/v1/policies/${draft.id}`, { token: org.token })).json).toEqual(res.json);
    // Again: unchanged, and nothing more is recorded.
    const again = await shadow(org, draft.id);
    expect(again.status).toBe(200);
    expect(again.json).toEqual(res.json);
    expect(await policyEntries(org.id)).toEqual([`policy.shadowed:${draft.id}`]);
  });

  it("one shadow at a time: shadowing another draft replaces it", async () => {
    const { org, draft } = await orgWithStricterDraft();
    const other = await createPolicy(org, { max_amount: 10 }, { activate: false });
    await shadowOk(org, draft.id);
    const res = await shadowOk(org, other.id);
    expect(res.shadow).toBe(true);
    expect((await call(`/v1/policies/${draft.id}`, { token: org.token })).json.shadow).toBe(false);
    expect(await shadowFlags(org.id)).toEqual([{ id: other.id }]);
    const list = await call("/v1/policies?shadow=true", { token: org.token });
    expect(list.json.data.map((p: Json) => p.id)).toEqual([other.id]);
    const rest = await call("/v1/policies?shadow=false&status=draft", { token: org.token });
    expect(rest.json.data.map((p: Json) => p.id)).toEqual([draft.id]);
  });

  it("concurrent shadowing of several drafts leaves exactly one shadow", async () => {
    const { org } = await orgWithKey();
    const drafts = await Promise.all(
      [1, 2, 3, 4].map((n) => createPolicy(org, { max_amount: n }, { activate: false })),
    );
    const answers = await Promise.all(drafts.map((d) => shadow(org, d.id)));
    for (const answer of answers) {
      if (answer.status !== 200) {
        expect(answer.status).toBe(409);
        expect(answer.error.error).toBe("policy_shadow_conflict");
      }
    }
    expect(answers.some((a) => a.status === 200)).toBe(true);
    expect(await shadowFlags(org.id)).toHaveLength(1);
  });

  it("the active policy cannot shadow itself: 409 policy_active, nothing changes", async () => {
    const { org, active, draft } = await orgWithStricterDraft();
    await shadowOk(org, draft.id);
    const res = await shadow(org, active.id);
    expect(res.status).toBe(409);
    expect(res.json).toEqual(
      errorBody("policy_active", [
        { path: "id", message: "the active policy decides; only a draft can shadow it" },
      ]),
    );
    expect(await shadowFlags(org.id)).toEqual([{ id: draft.id }]);
  });

  it("an unknown id is 404 and leaves the current shadow in place", async () => {
    const { org, draft } = await orgWithStricterDraft();
    await shadowOk(org, draft.id);
    const res = await shadow(org, crypto.randomUUID());
    expect(res.status).toBe(404);
    expect(res.error).toEqual(errorBody("not_found"));
    expect(await shadowFlags(org.id)).toEqual([{ id: draft.id }]);
  });
});

describe("DELETE /v1/policies/{id}/shadow", () => {
  it("stops shadowing: the draft stays, shadow false, audited; a repeat answers 200 unchanged", async () => {
    const { org, key, draft } = await orgWithStricterDraft();
    await shadowOk(org, draft.id);
    const res = await shadow(org, draft.id, "DELETE");
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ ...draft, shadow: false });
    const again = await shadow(org, draft.id, "DELETE");
    expect(again.status).toBe(200);
    expect(again.json).toEqual(res.json);
    expect(await policyEntries(org.id)).toEqual([
      `policy.shadowed:${draft.id}`,
      `policy.unshadowed:${draft.id}`,
    ]);
    // Nothing shadows the next assessment.
    const assessed = await assessOk(key, { mandate: payment() });
    expect((await stored(assessed.assessmentId)).shadow).toBeNull();
  });

  it("an unknown id is 404", async () => {
    const { org } = await orgWithKey();
    const res = await shadow(org, crypto.randomUUID(), "DELETE");
    expect(res.status).toBe(404);
    expect(res.error).toEqual(errorBody("not_found"));
  });
});

describe("assessing with a shadow policy", () => {
  it("records the shadow's would-be verdict with the assessment and never acts on it", async () => {
    const { org, key, active, draft } = await orgWithStricterDraft();
    await shadowOk(org, draft.id);
    const assessed = await assessOk(key, { mandate: payment() });
    expect(assessed.decision).not.toBe("deny");
    const row = await stored(assessed.assessmentId);
    expect(row.decision).toBe(assessed.decision);
    expect(row.policy_version).toBe(active.version);
    expect(row.shadow).toEqual({
      policy_id: draft.id,
      version: null,
      decision: "deny",
      risk_score: expect.any(Number),
      reason: "Denied: amount 19900 USD exceeds the policy maximum 500.",
      rule: null,
    });
    expect(row.shadow?.risk_score).toBeGreaterThanOrEqual(70);
    // Not in the Outcome, not in the signed claims, not in the events.
    const read = await call(`/v1/assessments/${assessed.assessmentId}`, { token: org.token });
    expect(JSON.stringify(read.json)).not.toContain("shadow");
    expect(JSON.stringify(assessed)).not.toContain("shadow");
    const claims = decodeJwsPart(read.json.risk_payload!.jws.split(".")[1]!);
    expect(claims.decision).toBe(assessed.decision);
    expect(JSON.stringify(claims)).not.toContain("shadow");
    const events = (await ownerSql`select type from events
      where org_id = ${org.id} and data->>'assessment_id' = ${assessed.assessmentId}`) as Json[];
    expect(events.map((e) => e.type)).not.toContain("assessment.denied");
  });

  it("the Outcome and the Risk Payload are the same with and without a shadow", async () => {
    const { org, key, draft } = await orgWithStricterDraft();
    const without = await assessOk(key, { mandate: payment() });
    await shadowOk(org, draft.id);
    const withShadow = await assessOk(key, { mandate: payment() });
    expect((await stored(withShadow.assessmentId)).shadow?.decision).toBe("deny");
    expect((await stored(without.assessmentId)).shadow).toBeNull();
    // Everything but what differs between any two assessments (ids, times, signatures).
    const perAssessment = (o: Json) => ({
      ...o.outcome,
      id: "",
      created: "",
      latency_ms: 0,
      audit: { ...o.outcome.audit, entry_id: "", sequence: 0 },
      risk_payload: { ...o.outcome.risk_payload, jws: "" },
      // A `review` opens its own item (docs/reviews.md): the same refinement but for its id.
      refinement: o.outcome.refinement && { ...o.outcome.refinement, review_id: "" },
    });
    expect(perAssessment(withShadow)).toEqual(perAssessment(without));
    expect(Object.keys(withShadow)).toEqual(Object.keys(without));
    const parts = (o: Json) => o.outcome.risk_payload.jws.split(".") as string[];
    expect(parts(withShadow)[0]).toBe(parts(without)[0]);
    const claims = (o: Json) => {
      const all = decodeJwsPart(parts(o)[1] as string);
      // `status`: each verdict's own place in the org's status list (docs/status-lists.md).
      for (const k of [
        "sub",
        "iat",
        "exp",
        "jti",
        "assessment_id",
        "mandate_id",
        "mandate_hash",
        "status",
      ]) {
        expect(all[k]).toBeDefined();
        all[k] = "";
      }
      return all;
    };
    expect(JSON.stringify(claims(withShadow))).toBe(JSON.stringify(claims(without)));
  });

  it("counts the shadow's own windows: its rule list's aggregate and its velocity", async () => {
    const { org, key } = await orgWithKey();
    await createPolicy(org, { max_amount: 1_000_000 });
    const draft = await createPolicy(
      org,
      {
        velocity: { window: "1h", max: 3 },
        grammar: 1,
        rules: [{ id: "third", action: "deny", when: c("count.agent.1h", "gte", 2) }],
      },
      { activate: false },
    );
    await shadowOk(org, draft.id);
    const agent = await agentOf(org);
    const verdicts: Json[] = [];
    for (let n = 0; n < 4; n++) {
      const assessed = await assessOk(key, { mandate: payment(), agent_id: agent.id });
      verdicts.push({
        active: assessed.decision,
        shadow: (await stored(assessed.assessmentId)).shadow,
      });
    }
    expect(verdicts.map((v) => v.shadow.rule)).toEqual([null, null, "third", "third"]);
    expect(verdicts.map((v) => v.shadow.decision).slice(2)).toEqual(["deny", "deny"]);
    expect(verdicts.map((v) => v.active).every((d) => d !== "deny")).toBe(true);
    // The fourth is past the shadow's velocity (3 per hour); the active policy has none.
    expect(verdicts[3]?.shadow.reason).toContain("the policy allows 3 per 1h");
    expect(verdicts[2]?.shadow.reason).not.toContain("the policy allows 3 per 1h");
  });

  it("test mode is shadowed too, kept apart from live", async () => {
    const { org, draft } = await orgWithStricterDraft();
    await shadowOk(org, draft.id);
    const { key: testKey } = await org.key(undefined, "test");
    const assessed = await assessOk(testKey, { mandate: payment() });
    const [row] = (await ownerSql`select livemode, shadow from assessments
      where id = ${assessed.assessmentId}`) as Json[];
    expect(row).toEqual({ livemode: false, shadow: expect.objectContaining({ decision: "deny" }) });
  });

  it("a replay answers the stored assessment and shadows nothing again", async () => {
    const { org, key, draft } = await orgWithStricterDraft();
    await shadowOk(org, draft.id);
    const body = { mandate: payment() };
    const first = await assessOk(key, body);
    const replay = await assessOk(key, body);
    expect(replay.assessmentId).toBe(first.assessmentId);
    const rows = (await ownerSql`select count(*)::int as n from assessments
      where org_id = ${org.id} and shadow is not null`) as Json[];
    expect(rows[0]?.n).toBe(1);
  });
});

describe("a shadow that fails", () => {
  it("rules that can no longer be read fail the shadow's policy stage, and the assessment is decided as without", async () => {
    const { org, key, draft } = await orgWithStricterDraft();
    const without = await assessOk(key, { mandate: payment() });
    await shadowOk(org, draft.id);
    // As if stored under a grammar this version no longer reads.
    await ownerSql`update policies set rules = '{"grammar": 99, "rules": []}'::jsonb
      where id = ${draft.id}`;
    const assessed = await assessOk(key, { mandate: payment() });
    expect(assessed.decision).toBe(without.decision);
    expect(assessed.outcome.signals).toEqual(without.outcome.signals);
    const recorded = (await stored(assessed.assessmentId)).shadow;
    // Its policy stage failed: a high fault signal on top of what the active policy saw.
    expect(recorded).toMatchObject({ policy_id: draft.id, decision: "deny", rule: null });
    expect(recorded?.risk_score).toBeGreaterThan(without.outcome.outcome.risk_score);
  });

  it("an assessment completed by its retry after a persist fault keeps its shadow verdict", async () => {
    const { org, key, draft } = await orgWithStricterDraft();
    await shadowOk(org, draft.id);
    const body = { mandate: payment() };
    const failed = await assessWith({ TEST_FAULTS: "persist" }, key, body);
    expect(failed.status).toBe(500);
    const retried = await assessOk(key, body);
    expect((await stored(retried.assessmentId)).shadow).toMatchObject({
      policy_id: draft.id,
      decision: "deny",
    });
  });
});

describe("activation and rollback with a shadow policy", () => {
  it("activating the shadow clears its flag; each assessment records the version that decided", async () => {
    const { org, key } = await orgWithKey();
    const a = await createPolicy(org, { max_amount: 1_000_000 }, { name: "a" });
    const b = await createPolicy(org, { max_amount: 500 }, { activate: false, name: "b" });
    expect(a.version).toBe(1);

    await shadowOk(org, b.id);
    const shadowed = await assessOk(key, { mandate: payment() });
    expect(await stored(shadowed.assessmentId)).toMatchObject({
      policy_version: 1,
      shadow: { policy_id: b.id, version: null, decision: "deny" },
    });

    const promoted = await activate(org, b.id);
    expect(promoted.status).toBe(200);
    expect(promoted.json).toMatchObject({ status: "active", version: 2, shadow: false });
    expect(await shadowFlags(org.id)).toEqual([]);
    const underB = await assessOk(key, { mandate: payment() });
    expect(underB.decision).toBe("deny");
    expect(underB.outcome.outcome.policy_version).toBe(2);
    expect(await stored(underB.assessmentId)).toMatchObject({ policy_version: 2, shadow: null });

    // The old active policy, now a draft with its version, shadows the new one.
    await shadowOk(org, a.id);
    const shadowedByA = await assessOk(key, { mandate: payment() });
    // A would decide as it did when it was active.
    expect(await stored(shadowedByA.assessmentId)).toMatchObject({
      policy_version: 2,
      decision: "deny",
      shadow: { policy_id: a.id, version: 1, decision: shadowed.decision },
    });

    // Rolling back is activating again: a new version decides, the shadow flag is cleared.
    const rolledBack = await activate(org, a.id);
    expect(rolledBack.json).toMatchObject({ status: "active", version: 3, shadow: false });
    const underA = await assessOk(key, { mandate: payment() });
    expect(underA.outcome.outcome.policy_version).toBe(3);
    expect(await stored(underA.assessmentId)).toMatchObject({ policy_version: 3, shadow: null });
    const claims = decodeJwsPart(underA.outcome.risk_payload.jws.split(".")[1]);
    expect(claims.policy_version).toBe(3);
  });
});

describe("database round trips", () => {
  /** The SQL endpoint's counters (the same ones bench:assess reads). */
  async function endpointStats() {
    const url = new URL(env.DATABASE_URL as string);
    const res = await fetch(`http://${url.host}/stats`);
    return (await res.json()) as { requests: number; statements: number };
  }

  /** The fewest requests and statements one fresh assessment cost, over a few tries. */
  async function cost(key: string) {
    let best = { requests: Number.POSITIVE_INFINITY, statements: Number.POSITIVE_INFINITY };
    for (let n = 0; n < 4; n++) {
      const before = await endpointStats();
      await assessOk(key, { mandate: payment() });
      const after = await endpointStats();
      // Other tests share the endpoint: they can only add to a count, so the least is ours.
      best = {
        requests: Math.min(best.requests, after.requests - before.requests),
        statements: Math.min(best.statements, after.statements - before.statements),
      };
    }
    return best;
  }

  it("a shadow policy adds no round trip and no statement to a fresh assessment", async () => {
    const { org, key, draft } = await orgWithStricterDraft();
    const without = await cost(key);
    await shadowOk(org, draft.id);
    const withShadow = await cost(key);
    expect(without.requests).toBe(2);
    expect(withShadow).toEqual(without);
  });
});
