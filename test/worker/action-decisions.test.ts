import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { Env } from "../../src/env";
import worker from "../../workers/main";
import { CAPTURE, decide, type Json, newMandate } from "./support/action";
import { call, newOrg } from "./support/api";
import { ownerSql } from "./support/db";
import { errorBody } from "./support/errors";
import { verifyJws } from "./support/jws";

// Decisions: POST /v1/action-mandates/{id}/decisions and GET /v1/action-decisions/{id}.

async function setup(mandate: Json = {}) {
  const org = await newOrg();
  const { key } = await org.key(["assess:write", "assess:read"]);
  const executor = await org.key(["assess:write"]);
  return { org, key, executor, mandate: await newMandate(org, mandate) };
}

async function usage(mandateId: string) {
  const [row] =
    await ownerSql`select uses, amount_used from action_mandates where id = ${mandateId}`;
  return { uses: Number(row?.uses), amount_used: Number(row?.amount_used) };
}

function codes(res: { json: Json }) {
  return res.json.reasons.map((r: Json) => r.code);
}

describe("an ALLOW", () => {
  it("answers 201 with a single-use grant for the executor, and uses the mandate once", async () => {
    const { org, key, executor, mandate } = await setup();
    const res = await decide(key, mandate.id, { ...CAPTURE, audience: executor.id });
    expect(res.status).toBe(201);
    const [entry] = await ownerSql`select id, sequence from audit_entries
      where org_id = ${org.id} and type = 'action_decision.created'`;
    expect(res.json).toEqual({
      object: "action_decision",
      id: expect.any(String),
      mandate_id: mandate.id,
      decision: "ALLOW",
      reasons: [],
      agent: { id: mandate.agent_id, status: "active", trust_score: 30, risk_tier: "high" },
      ...CAPTURE,
      audience: executor.id,
      grant: {
        id: expect.any(String),
        jws: expect.any(String),
        expires_at: expect.any(String),
        status_list: {
          idx: expect.any(Number),
          uri: expect.stringMatching(/\/v1\/status-lists\//),
        },
      },
      created: expect.any(String),
      grant_status: "issued",
      audit: { entry_id: entry?.id, sequence: Number(entry?.sequence) },
    });
    expect(await usage(mandate.id)).toEqual({ uses: 1, amount_used: 1000 });
    const read = await call(`/v1/action-decisions/${res.json.id}`, { key });
    expect(read.json).toEqual(res.json);
  });

  it("carries a grant: a compact JWS (EdDSA) naming org, decision, mandate, action, resource, amount, audience, an id, a five-minute expiry and its status-list place", async () => {
    const { org, key, executor, mandate } = await setup();
    const res = await decide(key, mandate.id, { ...CAPTURE, audience: executor.id });
    const { json: keySet } = await call("/.well-known/jwks.json");
    const verified = await verifyJws(res.json.grant!.jws, keySet.keys);
    expect(verified.valid).toBe(true);
    expect(verified.header).toEqual({
      alg: "EdDSA",
      kid: keySet.keys[0]!.kid,
      typ: "action-grant+jwt",
    });
    const claims = JSON.parse(verified.payload);
    expect(claims).toEqual({
      iss: "agent-risk",
      jti: res.json.grant!.id,
      org: org.id,
      decision: res.json.id,
      mandate: mandate.id,
      ...CAPTURE,
      aud: executor.id,
      iat: expect.any(Number),
      exp: claims.iat + 300,
      status: { status_list: res.json.grant!.status_list },
    });
    expect(res.json.grant!.expires_at).toBe(new Date(claims.exp * 1000).toISOString());
  });

  it("needs no grant: grant false answers an ALLOW without one, and still uses the mandate", async () => {
    const { key, mandate } = await setup();
    const res = await decide(key, mandate.id, { ...CAPTURE, grant: false });
    expect(res.status).toBe(201);
    expect(res.json).toMatchObject({ decision: "ALLOW", grant: null, grant_status: null });
    expect(await usage(mandate.id)).toEqual({ uses: 1, amount_used: 1000 });
  });

  it.each([
    ["merchant:acme/*", "merchant:acme/order-9"],
    ["merchant:acme/*", "merchant:acme/"],
    ["*", "anything:at/all"],
    ["merchant:acme/order-1", "merchant:acme/order-1"],
  ])("matches the pattern %s with the resource %s", async (pattern, resource) => {
    const { key, mandate } = await setup({ resource: pattern });
    const res = await decide(key, mandate.id, { ...CAPTURE, resource, grant: false });
    expect(res.json.decision).toBe("ALLOW");
  });
});

describe("a DENY", () => {
  it.each<[string, Json, Json, string[]]>([
    ["another action", {}, { action: "payment.refund" }, ["action_mismatch"]],
    [
      "a resource outside the pattern",
      {},
      { resource: "merchant:acmex/order-1" },
      ["resource_mismatch"],
    ],
    [
      "a prefix of an exact resource",
      { resource: "merchant:acme/order" },
      { resource: "merchant:acme/order-1" },
      ["resource_mismatch"],
    ],
    ["another currency", {}, { currency: "EUR" }, ["currency_mismatch"]],
    ["an amount over the per-use limit", {}, { amount: 5001 }, ["amount_exceeds_per_use"]],
    [
      "an amount over the total",
      { max_amount_per_use: undefined, max_amount_total: 900 },
      {},
      ["amount_exceeds_total"],
    ],
    [
      "no amount where the mandate bounds amounts",
      {},
      { amount: undefined, currency: undefined },
      ["amount_required"],
    ],
    [
      "a mandate not yet valid",
      { not_before: "2098-01-01T00:00:00Z", expires_at: "2099-01-01T00:00:00Z" },
      {},
      ["mandate_not_yet_valid"],
    ],
    [
      "several flaws at once",
      {},
      { action: "x", resource: "y", amount: 9999 },
      ["action_mismatch", "resource_mismatch", "amount_exceeds_per_use"],
    ],
  ])("for %s: 201 with every reason, and nothing used", async (_, mandate, change, expected) => {
    const { key, mandate: created } = await setup(mandate);
    const res = await decide(key, created.id, { ...CAPTURE, grant: false, ...change });
    expect(res.status).toBe(201);
    expect(res.json).toMatchObject({ decision: "DENY", grant: null, grant_status: null });
    expect(codes(res)).toEqual(expected);
    for (const reason of res.json.reasons) expect(reason.message).toEqual(expect.any(String));
    expect(await usage(created.id)).toEqual({ uses: 0, amount_used: 0 });
  });

  it("for an expired mandate", async () => {
    const { key, mandate } = await setup();
    await ownerSql`update action_mandates set not_before = now() - interval '2 hours',
      expires_at = now() - interval '1 hour' where id = ${mandate.id}`;
    const res = await decide(key, mandate.id, { ...CAPTURE, grant: false });
    expect(codes(res)).toEqual(["mandate_expired"]);
  });

  it("for a revoked mandate, and never with a grant", async () => {
    const { org, key, executor, mandate } = await setup();
    await call(`/v1/action-mandates/${mandate.id}/revoke`, { method: "POST", token: org.token });
    const res = await decide(key, mandate.id, { ...CAPTURE, audience: executor.id });
    expect(res.status).toBe(201);
    expect(res.json).toMatchObject({ decision: "DENY", grant: null });
    expect(codes(res)).toEqual(["mandate_revoked"]);
  });

  it.each<[string, Json[], string]>([
    ["suspended", [{ status: "suspended" }], "agent_suspended"],
    ["revoked", [{ status: "revoked" }], "agent_revoked"],
    // Suspended once and reactivated: 30 − 10 = 20, the critical tier.
    ["of critical risk", [{ status: "suspended" }, { status: "active" }], "agent_risk_critical"],
  ])("for an agent %s", async (_, patches, code) => {
    const { org, key, mandate } = await setup();
    for (const body of patches) {
      const patched = await call(`/v1/agents/${mandate.agent_id}`, {
        method: "PATCH",
        token: org.token,
        body,
      });
      expect(patched.status).toBe(200);
    }
    const res = await decide(key, mandate.id, { ...CAPTURE, grant: false });
    expect(codes(res)).toEqual([code]);
    expect(res.json.agent.id).toBe(mandate.agent_id);
  });

  it("is recorded in the ledger like an ALLOW", async () => {
    const { org, key, mandate } = await setup();
    const res = await decide(key, mandate.id, { ...CAPTURE, action: "x", grant: false });
    const entries = await ownerSql`select id, subject_type, subject_id from audit_entries
      where org_id = ${org.id} and type = 'action_decision.created'`;
    expect(entries).toEqual([
      { id: res.json.audit.entry_id, subject_type: "action_decision", subject_id: res.json.id },
    ]);
  });
});

describe("limits", () => {
  it("uses: the use after the last is a DENY uses_exhausted", async () => {
    const { key, mandate } = await setup({ max_uses: 2 });
    const answers = [];
    for (let i = 0; i < 3; i++)
      answers.push(await decide(key, mandate.id, { ...CAPTURE, grant: false }));
    expect(answers.map((a) => a.json.decision)).toEqual(["ALLOW", "ALLOW", "DENY"]);
    expect(codes(answers[2] as { json: Json })).toEqual(["uses_exhausted"]);
    expect(await usage(mandate.id)).toEqual({ uses: 2, amount_used: 2000 });
  });

  it("total: an amount that would pass the total is a DENY amount_exceeds_total", async () => {
    const { key, mandate } = await setup({ max_uses: undefined, max_amount_total: 2500 });
    const answers = [];
    for (const amount of [1000, 1000, 1000, 500]) {
      answers.push(await decide(key, mandate.id, { ...CAPTURE, amount, grant: false }));
    }
    expect(answers.map((a) => a.json.decision)).toEqual(["ALLOW", "ALLOW", "DENY", "ALLOW"]);
    expect(codes(answers[2] as { json: Json })).toEqual(["amount_exceeds_total"]);
    expect(await usage(mandate.id)).toEqual({ uses: 3, amount_used: 2500 });
  });

  it("hold under concurrency: of 12 simultaneous requests for 3 uses, exactly 3 are ALLOWed", async () => {
    const { org, key, mandate } = await setup({ max_uses: 3, max_amount_total: 100000 });
    const answers = await Promise.all(
      Array.from({ length: 12 }, () => decide(key, mandate.id, { ...CAPTURE, grant: false })),
    );
    expect(answers.every((a) => a.status === 201)).toBe(true);
    const allowed = answers.filter((a) => a.json.decision === "ALLOW");
    expect(allowed).toHaveLength(3);
    for (const denied of answers.filter((a) => a.json.decision === "DENY")) {
      expect(["uses_exhausted", "limits_exhausted"]).toContain(denied.json.reasons[0]!.code);
    }
    expect(await usage(mandate.id)).toEqual({ uses: 3, amount_used: 3000 });
    const rows = await ownerSql`select decision, count(*)::int as n from action_decisions
      where org_id = ${org.id} group by decision order by decision`;
    expect(rows).toEqual([
      { decision: "ALLOW", n: 3 },
      { decision: "DENY", n: 9 },
    ]);
    // Every stored decision has its entry, and the ledger still verifies.
    const unrecorded = await ownerSql`select d.id from action_decisions d
      left join audit_entries e on e.id = d.audit_entry_id and e.subject_id = d.id::text
      where d.org_id = ${org.id} and e.id is null`;
    expect(unrecorded).toEqual([]);
    const verify = await call("/v1/audit/verify", { token: org.token });
    expect(verify.json).toMatchObject({ ok: true, first_break: null });
  });
});

describe("validation", () => {
  it.each<[string, Json]>([
    ["an unknown field", { colour: "red" }],
    ["an amount without a currency", { currency: undefined }],
    ["a currency without an amount", { amount: undefined }],
    ["a grant without an audience", { audience: undefined, grant: true }],
    ["a pattern as the resource", { resource: "merchant:acme/*" }],
    ["an audience that is not a uuid", { audience: "executor-1" }],
    ["a negative amount", { amount: -5 }],
  ])("refuses %s: 400 invalid_request, nothing decided", async (_, change) => {
    const { org, key, executor, mandate } = await setup();
    const res = await decide(key, mandate.id, { ...CAPTURE, audience: executor.id, ...change });
    expect(res.status).toBe(400);
    expect(res.error.error).toBe("invalid_request");
    expect(await ownerSql`select id from action_decisions where org_id = ${org.id}`).toEqual([]);
  });

  it("refuses an audience that cannot redeem: a revoked key, a key without assess:write, another org's key", async () => {
    const { org, key, mandate } = await setup();
    const revoked = await org.key(["assess:write"]);
    await call(`/v1/api-keys/${revoked.id}/revoke`, { method: "POST", token: org.token });
    const reader = await org.key(["assess:read"]);
    const foreign = await (await newOrg()).key(["assess:write"]);
    for (const audience of [revoked.id, reader.id, foreign.id]) {
      const res = await decide(key, mandate.id, { ...CAPTURE, audience });
      expect(res.status).toBe(400);
      expect(res.error.details[0].path).toBe("audience");
    }
    expect(await usage(mandate.id)).toEqual({ uses: 0, amount_used: 0 });
  });

  it("accepts the owner's user as the audience", async () => {
    const { org, key, mandate } = await setup();
    const [user] = await ownerSql`select id from users where idp_subject = ${org.subject}`;
    const res = await decide(key, mandate.id, { ...CAPTURE, audience: user?.id });
    expect(res.json.decision).toBe("ALLOW");
  });

  it("answers 404 for an unknown mandate", async () => {
    const org = await newOrg();
    const { key } = await org.key(["assess:write"]);
    const res = await decide(key, "0190b7d2-8c5e-7c4a-9d3e-1f2a3b4c5d6e", {
      ...CAPTURE,
      grant: false,
    });
    expect(res.status).toBe(404);
    expect(res.error).toEqual(errorBody("not_found"));
  });
});

describe("when the signing key is unavailable", () => {
  it("answers 503 and decides nothing: no decision, no use, no ledger entry", async () => {
    const { org, key, executor, mandate } = await setup();
    const ctx = createExecutionContext();
    const broken: Env = { ...env, SIGNING_KEY: undefined };
    const response = await worker.fetch(
      new Request(`https://risk.test/v1/action-mandates/${mandate.id}/decisions`, {
        method: "POST",
        headers: { "x-api-key": key, "content-type": "application/json" },
        body: JSON.stringify({ ...CAPTURE, audience: executor.id }),
      }),
      broken,
      ctx,
    );
    await waitOnExecutionContext(ctx);
    expect(response.status).toBe(503);
    expect(await response.json()).toEqual(errorBody("signing_key_unavailable"));
    expect(await usage(mandate.id)).toEqual({ uses: 0, amount_used: 0 });
    expect(await ownerSql`select id from action_decisions where org_id = ${org.id}`).toEqual([]);
    const entries = await ownerSql`select id from audit_entries
      where org_id = ${org.id} and type = 'action_decision.created'`;
    expect(entries).toEqual([]);
  });
});
