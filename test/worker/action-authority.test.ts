import { decodeJwt, exportJWK, generateKeyPair, SignJWT } from "jose";
import { describe, expect, it } from "vitest";
import {
  allowed,
  CAPTURE,
  decide,
  inAnHour,
  type Json,
  redeem,
  signAsService,
} from "./support/action";
import { call, newOrg } from "./support/api";
import { ownerSql } from "./support/db";
import { errorBody } from "./support/errors";
import { newAgent } from "./support/identity";
import { verifyJws } from "./support/jws";
import { sequenceOnly } from "./support/ledger";

// Grants and their redemption (issue 8): the executor proves the gate was passed, once.

async function redemptions(orgId: string) {
  const rows = await ownerSql`select grant_id from action_redemptions where org_id = ${orgId}`;
  const entries = await ownerSql`select id, sequence, subject_id from audit_entries
    where org_id = ${orgId} and type = 'action_grant.redeemed'`;
  return { rows, entries };
}

describe("POST /v1/action-grants/redeem", () => {
  it("redeems a matching, unexpired grant: 200, a signed receipt, and the ledger entry", async () => {
    const org = await newOrg();
    const { executor, decision, grant } = await allowed(org);
    const res = await redeem(executor.key, { grant, ...CAPTURE });
    expect(res.status).toBe(200);
    const { entries } = await redemptions(org.id);
    expect(res.json).toEqual({
      object: "action_redemption",
      redeemed: true,
      grant_id: decision.grant!.id,
      decision_id: decision.id,
      mandate_id: decision.mandate_id,
      ...CAPTURE,
      executor: { type: "api_key", id: executor.id },
      redeemed_at: expect.stringMatching(/Z$/),
      proves: expect.stringContaining("Only this matching, unexpired redemption proves"),
      receipt_jws: expect.any(String),
      audit: { entry_id: entries[0]?.id, sequence: Number(entries[0]?.sequence) },
    });
    expect(entries).toHaveLength(1);
    expect(entries[0]?.subject_id).toBe(decision.grant!.id);

    const { json: keySet } = await call("/.well-known/jwks.json");
    const receipt = await verifyJws(res.json.receipt_jws, keySet.keys);
    expect(receipt.valid).toBe(true);
    expect(receipt.header.typ).toBe("action-redemption+jwt");
    expect(JSON.parse(receipt.payload)).toMatchObject({
      org: org.id,
      grant_id: decision.grant!.id,
      decision_id: decision.id,
      mandate_id: decision.mandate_id,
      ...CAPTURE,
      executor: { type: "api_key", id: executor.id },
      redeemed_at: res.json.redeemed_at,
    });
    const read = await call(`/v1/action-decisions/${decision.id}`, { token: org.token });
    expect(read.json.grant_status).toBe("redeemed");
  });

  it("redeems once under fifty concurrent attempts: one 200, 49 × 409 naming that one", async () => {
    const org = await newOrg();
    const { executor, decision, grant } = await allowed(org);
    const answers = await Promise.all(
      Array.from({ length: 50 }, () => redeem(executor.key, { grant, ...CAPTURE })),
    );
    const won = answers.filter((a) => a.status === 200);
    const lost = answers.filter((a) => a.status === 409);
    expect(won).toHaveLength(1);
    expect(lost).toHaveLength(49);
    const first = won[0]?.json;
    for (const answer of lost) {
      expect(answer.json).toEqual(
        errorBody("grant_already_redeemed", {
          grant_id: decision.grant!.id,
          redeemed_at: first!.redeemed_at,
          executor: first!.executor,
          audit: first!.audit,
        }),
      );
    }
    const { rows, entries } = await redemptions(org.id);
    expect(rows).toEqual([{ grant_id: decision.grant!.id }]);
    expect(entries).toHaveLength(1);
    expect(entries[0]?.id).toBe(first!.audit.entry_id);
    const later = await redeem(executor.key, { grant, ...CAPTURE });
    expect(later.status).toBe(409);
    expect(later.error.details.audit).toEqual(first!.audit);
  });

  it("names the first redemption to every later attempt, even after the grant expired", async () => {
    const org = await newOrg();
    const { executor, grant } = await allowed(org);
    const first = await redeem(executor.key, { grant, ...CAPTURE });
    expect(first.status).toBe(200);
    const now = Math.floor(Date.now() / 1000);
    const expired = await signAsService({ ...decodeJwt(grant), iat: now - 301, exp: now - 1 });
    const later = await redeem(executor.key, { grant: expired, ...CAPTURE });
    expect(later.status).toBe(409);
    expect(later.error.details).toMatchObject({
      redeemed_at: first.json.redeemed_at,
      audit: first.json.audit,
    });
  });

  it("refuses an expired grant: 400 grant_expired, nothing redeemed", async () => {
    const org = await newOrg();
    const { executor, grant } = await allowed(org);
    // The grant as the service issued it, but past its expiry: signed with the service's key.
    const claims = decodeJwt(grant);
    const now = Math.floor(Date.now() / 1000);
    const expired = await signAsService({ ...claims, iat: now - 301, exp: now - 1 });
    const res = await redeem(executor.key, { grant: expired, ...CAPTURE });
    expect(res.status).toBe(400);
    expect(res.json).toEqual(
      errorBody("grant_expired", [
        { path: "grant", message: `expired at ${new Date((now - 1) * 1000).toISOString()}` },
      ]),
    );
    expect(await redemptions(org.id)).toEqual({ rows: [], entries: [] });
    // The grant itself is still good until its own expiry.
    expect((await redeem(executor.key, { grant, ...CAPTURE })).status).toBe(200);
  });

  it("refuses a grant whose details do not match: 400 grant_mismatch naming each field", async () => {
    const org = await newOrg();
    const { executor, grant } = await allowed(org);
    const res = await redeem(executor.key, {
      grant,
      action: "payment.refund",
      resource: "merchant:acme/order-2",
      amount: 1001,
      currency: "EUR",
    });
    expect(res.status).toBe(400);
    expect(res.error.error).toBe("grant_mismatch");
    expect(res.error.details).toEqual([
      {
        path: "action",
        message: expect.any(String),
        expected: "payment.capture",
        actual: "payment.refund",
      },
      {
        path: "resource",
        message: expect.any(String),
        expected: "merchant:acme/order-1",
        actual: "merchant:acme/order-2",
      },
      { path: "amount", message: expect.any(String), expected: 1000, actual: 1001 },
      { path: "currency", message: expect.any(String), expected: "USD", actual: "EUR" },
    ]);
    const noAmount = await redeem(executor.key, {
      grant,
      action: CAPTURE.action,
      resource: CAPTURE.resource,
    });
    expect(noAmount.error.details.map((d: Json) => d.path)).toEqual(["amount", "currency"]);
    expect(await redemptions(org.id)).toEqual({ rows: [], entries: [] });
    // A mismatch uses nothing up: the matching request still redeems.
    expect((await redeem(executor.key, { grant, ...CAPTURE })).status).toBe(200);
  });

  it("refuses an executor other than the grant's audience: grant_mismatch on audience", async () => {
    const org = await newOrg();
    const { executor, grant } = await allowed(org);
    const other = await org.key(["assess:write"]);
    const res = await redeem(other.key, { grant, ...CAPTURE });
    expect(res.status).toBe(400);
    expect(res.error.details).toEqual([
      { path: "audience", message: expect.any(String), expected: executor.id, actual: other.id },
    ]);
  });

  it("refuses a tampered grant: a claim changed, the signature kept, 400 grant_invalid", async () => {
    const org = await newOrg();
    const { executor, grant } = await allowed(org);
    const [header, payload, signature] = grant.split(".") as [string, string, string];
    const claims = JSON.parse(atob(payload.replaceAll("-", "+").replaceAll("_", "/")));
    const flipped = btoa(JSON.stringify({ ...claims, amount: 100000 }))
      .replaceAll("+", "-")
      .replaceAll("/", "_")
      .replaceAll("=", "");
    const res = await redeem(executor.key, {
      grant: `${header}.${flipped}.${signature}`,
      ...CAPTURE,
      amount: 100000,
    });
    expect(res.status).toBe(400);
    expect(res.json).toEqual(
      errorBody("grant_invalid", [
        { path: "grant", message: "not a grant signed by this service" },
      ]),
    );
    expect(await redemptions(org.id)).toEqual({ rows: [], entries: [] });
  });

  it("refuses what is not a grant of this service: another key, another typ, garbage", async () => {
    const org = await newOrg();
    const { executor, grant } = await allowed(org);
    const claims = decodeJwt(grant);
    const { privateKey, publicKey } = await generateKeyPair("EdDSA");
    // A forger's own key, even named by the token's header, verifies nothing here.
    const forged = await new SignJWT(claims)
      .setProtectedHeader({
        alg: "EdDSA",
        typ: "action-grant+jwt",
        jwk: await exportJWK(publicKey),
      })
      .sign(privateKey);
    const receipt = await signAsService(claims, "action-redemption+jwt");
    for (const token of [forged, receipt, "garbage", "e30.e30.AAAA"]) {
      const res = await redeem(executor.key, { grant: token, ...CAPTURE });
      expect(res.status).toBe(400);
      expect(res.error.error).toBe("grant_invalid");
    }
  });

  it("refuses a grant of another org: 404, and the grant stays redeemable in its own", async () => {
    const owner = await newOrg();
    const { executor, grant } = await allowed(owner);
    const intruder = await newOrg();
    const { key } = await intruder.key(["assess:write"]);
    const res = await redeem(key, { grant, ...CAPTURE });
    expect(res.status).toBe(404);
    expect(res.error).toEqual(errorBody("not_found"));
    expect(await redemptions(intruder.id)).toEqual({ rows: [], entries: [] });
    expect((await redeem(executor.key, { grant, ...CAPTURE })).status).toBe(200);
  });

  it("refuses a grant whose mandate was revoked since: 409 mandate_revoked", async () => {
    const org = await newOrg();
    const { key, executor, mandate, grant } = await allowed(org);
    const revoked = await call(`/v1/action-mandates/${mandate.id}/revoke`, {
      method: "POST",
      token: org.token,
    });
    const res = await redeem(executor.key, { grant, ...CAPTURE });
    expect(res.status).toBe(409);
    expect(res.json).toEqual(
      errorBody("mandate_revoked", [
        {
          path: "grant",
          message: `the mandate ${mandate.id} was revoked at ${revoked.json.revoked_at}`,
        },
      ]),
    );
    expect(await redemptions(org.id)).toEqual({ rows: [], entries: [] });
    const after = await decide(key, mandate.id, { ...CAPTURE, audience: executor.id });
    expect(after.json).toMatchObject({ decision: "DENY", grant: null });
  });

  it("refuses a grant whose agent was suspended since: 409 agent_not_active", async () => {
    const org = await newOrg();
    const { executor, mandate, grant } = await allowed(org);
    const suspended = await call(`/v1/agents/${mandate.agent_id}`, {
      method: "PATCH",
      token: org.token,
      body: { status: "suspended" },
    });
    expect(suspended.status).toBe(200);
    const res = await redeem(executor.key, { grant, ...CAPTURE });
    expect(res.status).toBe(409);
    expect(res.json).toEqual(
      errorBody("agent_not_active", [
        { path: "grant", message: `the agent ${mandate.agent_id} is suspended` },
      ]),
    );
    expect(await redemptions(org.id)).toEqual({ rows: [], entries: [] });
  });

  it("never issues a grant that outlives its mandate", async () => {
    const org = await newOrg();
    const expiresAt = new Date(Date.now() + 60_000).toISOString();
    const { decision } = await allowed(org, CAPTURE, { expires_at: expiresAt });
    expect(Date.parse(decision.grant!.expires_at)).toBeLessThanOrEqual(Date.parse(expiresAt));
  });

  it.each([
    ["not_before", "0000-01-01T00:00:00Z"],
    ["expires_at", "9999-12-31T23:00:00-05:00"],
  ])(
    "refuses %s %s out of the storable range with 400, recording nothing",
    async (field, value) => {
      const org = await newOrg();
      const agent = await newAgent(org);
      const res = await call("/v1/action-mandates", {
        method: "POST",
        token: org.token,
        body: {
          agent_id: agent.id,
          action: "a",
          resource: "r",
          expires_at: inAnHour(),
          [field]: value,
        },
      });
      expect(res.status).toBe(400);
      const entries = await ownerSql`select 1 from audit_entries
      where org_id = ${org.id} and type = 'action_mandate.created'`;
      expect(entries).toHaveLength(0);
    },
  );

  it("issues no grant once the limits are exhausted: uses, then total", async () => {
    const org = await newOrg();
    const { key, executor, mandate } = await allowed(org, CAPTURE, { max_uses: 2 });
    const second = await decide(key, mandate.id, { ...CAPTURE, audience: executor.id });
    expect(second.json.decision).toBe("ALLOW");
    const third = await decide(key, mandate.id, { ...CAPTURE, audience: executor.id });
    expect(third.json).toMatchObject({ decision: "DENY", grant: null });
    expect(third.json.reasons.map((r: Json) => r.code)).toEqual(["uses_exhausted"]);

    const total = await allowed(org, { ...CAPTURE, amount: 5000 }, { max_amount_total: 9000 });
    const over = await decide(total.key, total.mandate.id, {
      ...CAPTURE,
      amount: 4001,
      audience: total.executor.id,
    });
    expect(over.json).toMatchObject({ decision: "DENY", grant: null });
    expect(over.json.reasons.map((r: Json) => r.code)).toEqual(["amount_exceeds_total"]);
    // The grants of the earlier ALLOWs redeem as ever.
    expect(
      (await redeem(total.executor.key, { grant: total.grant, ...CAPTURE, amount: 5000 })).status,
    ).toBe(200);
  });

  it("refuses a malformed body: 400 invalid_request", async () => {
    const org = await newOrg();
    const { executor, grant } = await allowed(org);
    for (const body of [
      { ...CAPTURE },
      { grant, ...CAPTURE, extra: 1 },
      { grant, ...CAPTURE, currency: undefined },
      { grant: "", ...CAPTURE },
    ]) {
      const res = await call("/v1/action-grants/redeem", {
        method: "POST",
        key: executor.key,
        raw: true,
        body,
      });
      expect(res.status).toBe(400);
      expect(res.error.error).toBe("invalid_request");
    }
  });
});

describe("a redemption whose request died after the ledger object made it the one", () => {
  it("is still the one: later attempts get 409 naming it, and its record is written", async () => {
    const org = await newOrg();
    const { executor, decision, grant } = await allowed(org);
    // What the first request handed the ledger object before it died (src/action/redeem.ts).
    const first = {
      object: "action_redemption",
      grant_id: decision.grant!.id,
      decision_id: decision.id,
      mandate_id: decision.mandate_id,
      ...CAPTURE,
      executor: { type: "api_key", id: executor.id },
      redeemed_at: new Date().toISOString(),
      receipt_jws: "receipt",
    };
    const { entry } = await sequenceOnly(org.id, {
      type: "action_grant.redeemed",
      actor: first.executor,
      subject: { type: "action_grant", id: decision.grant!.id },
      digest: `sha256:${"ab".repeat(32)}`,
      once: [`grant:${decision.grant!.id}`],
      attachment: JSON.stringify(first),
    });
    const res = await redeem(executor.key, { grant, ...CAPTURE });
    expect(res.status).toBe(409);
    expect(res.error.details).toEqual({
      grant_id: decision.grant!.id,
      redeemed_at: first.redeemed_at,
      executor: first.executor,
      audit: { entry_id: entry.id, sequence: entry.sequence },
    });
    const { rows, entries } = await redemptions(org.id);
    expect(rows).toEqual([{ grant_id: decision.grant!.id }]);
    expect(entries.map((e) => e.id)).toEqual([entry.id]);
  });
});
