import { env, runInDurableObject } from "cloudflare:test";
import { calculateJwkThumbprint, createLocalJWKSet, type JSONWebKeySet, jwtVerify } from "jose";
import { describe, expect, it } from "vitest";
import { ledgerOf } from "../../src/ledger/ledger";
import { newSigner, type Signer } from "../support/ap2-chains";
import { call, type TestOrg } from "./support/api";
import { assessOk, createPolicy, type Json, orgWithKey } from "./support/assess";
import { provenAgentOrg, provenHolder, registerIssuer } from "./support/credentials";
import { ownerSql } from "./support/db";
import { errorBody } from "./support/errors";

// docs/reviews.md, "Credential-backed reviews": approving a review of an assessment with a
// verified AP2 credential spends it like an automated approval, judged by the org's ledger
// object (one consent pays once, budgets, recurrence); a refused spend approves nothing.

interface LedgerStore {
  addSpend: (
    livemode: boolean,
    consent: string,
    tx: string,
    amount: number,
    currency: string,
    seq: number,
  ) => void;
  spent: (
    livemode: boolean,
    consent: { root: string },
    tx: string,
    currency: string,
  ) => { consumedBy: number | null };
}

function storeOf(object: unknown): LedgerStore {
  return (object as { store: LedgerStore }).store;
}

/** Makes the org's policy review every verified credential. */
async function reviewVerified(org: TestOrg) {
  await createPolicy(org, {
    grammar: 1,
    rules: [
      {
        id: "review-verified",
        action: "review",
        when: { attr: "mandate.verified", op: "eq", value: true },
      },
    ],
  });
}

/** Assesses a verified credential the policy reviews: the item it opens, and what it keeps. */
async function openedBy(key: string, body: Json) {
  const answer = await assessOk(key, body);
  expect(answer.decision).toBe("review");
  expect(answer.outcome.credential).toMatchObject({ verified: true });
  const list = await call("/v1/reviews", { key });
  const item = list.json.data.find((r) => r.assessment_id === answer.assessmentId);
  expect(item?.credential_backed).toBe(true);
  const [row] = await ownerSql`select spend, recheck from reviews where id = ${item?.id}`;
  return { answer, item: item as Json, spend: row?.spend as Json, recheck: row?.recheck as Json };
}

/**
 * An org whose policy reviews every verified credential, and one such review item; `build`
 * makes its credential (the proven agent's `body` by default).
 */
async function credentialReview(
  build: (setup: Awaited<ReturnType<typeof provenAgentOrg>>) => Promise<Json> = (setup) =>
    setup.body(),
) {
  const setup = await provenAgentOrg();
  await reviewVerified(setup.org);
  return { ...setup, ...(await openedBy(setup.key, await build(setup))) };
}

function resolve(org: TestOrg, id: string, decision: "approve" | "deny") {
  return call(`/v1/reviews/${id}/resolve`, {
    method: "POST",
    token: org.token,
    body: { decision },
  });
}

describe("approving a credential-backed review", () => {
  it("spends the credential in the org's ledger object, once", async () => {
    const { org, item, spend } = await credentialReview();
    expect(spend).toMatchObject({ amount: 5000, currency: "CAD", budgets: [] });
    const res = await resolve(org, item.id, "approve");
    expect(res.status).toBe(200);
    expect(res.json.decision).toBe("approve");
    const consumed = await runInDurableObject(ledgerOf(env as never, org.id), (object) =>
      storeOf(object).spent(true, { root: spend.root }, spend.transaction, spend.currency),
    );
    expect(consumed.consumedBy).toEqual(expect.any(Number));
  });

  it("answers 409 with the reason when the spend is refused, and approves nothing", async () => {
    const { org, item, spend } = await credentialReview();
    // The same consent already paid this transaction (an automated approval, say).
    await runInDurableObject(ledgerOf(env as never, org.id), (object) => {
      storeOf(object).addSpend(
        true,
        spend.root,
        spend.transaction,
        spend.amount,
        spend.currency,
        -1,
      );
    });
    const res = await resolve(org, item.id, "approve");
    expect(res.status).toBe(409);
    expect(res.json).toEqual(
      errorBody("review_spend_refused", {
        reason: "already_consumed",
        message: "the credential's transaction was already approved under this consent",
      }),
    );
    const still = await call(`/v1/reviews/${item.id}`, { token: org.token });
    expect(still.json).toMatchObject({ status: "open", decision: null, risk_payload: null });
    const entries = await ownerSql`select 1 from audit_entries
      where org_id = ${org.id} and subject_type = 'review' and subject_id = ${item.id}`;
    expect(entries).toHaveLength(0);
    // Denying spends nothing, and still closes it.
    const denied = await resolve(org, item.id, "deny");
    expect(denied.status).toBe(200);
    expect(denied.json.decision).toBe("deny");
  });
});

// docs/reviews.md, "Re-checked on approval": approving re-checks what can have changed since the
// verdict (the issuer and its key, the holder key, the agent, the time windows); a refusal is
// 409 `review_recheck_failed`, and the item stays open for a denial or its SLA.

async function keySet(): Promise<JSONWebKeySet> {
  return (await call("/.well-known/jwks.json")).json as JSONWebKeySet;
}

function ledgerEntries(orgId: string, reviewId: string) {
  return ownerSql`select type from audit_entries
    where org_id = ${orgId} and subject_type = 'review' and subject_id = ${reviewId}`;
}

/** Waits until the clock reads `epochMs` (the Worker's clock is the same one). */
async function until(epochMs: number) {
  const wait = epochMs - Date.now();
  if (wait > 0) await new Promise((done) => setTimeout(done, wait));
}

const iso = (seconds: number) => new Date(seconds * 1000).toISOString();

/** The approval refused with `reason`: nothing closed or sequenced, and a denial still closes it. */
async function expectRecheckRefused(org: TestOrg, item: Json, reason: string, message: string) {
  const res = await resolve(org, item.id, "approve");
  expect(res.status).toBe(409);
  expect(res.error).toEqual(errorBody("review_recheck_failed", { reason, message }));
  const still = await call(`/v1/reviews/${item.id}`, { token: org.token });
  expect(still.json).toMatchObject({
    status: "open",
    decision: null,
    resolved_at: null,
    risk_payload: null,
    audit_entry_id: null,
  });
  expect(await ledgerEntries(org.id, item.id)).toHaveLength(0);
  const denied = await resolve(org, item.id, "deny");
  expect(denied.status).toBe(200);
  expect(denied.json).toMatchObject({ status: "resolved", decision: "deny" });
  expect(await ledgerEntries(org.id, item.id)).toEqual([{ type: "review.resolved" }]);
}

/** Publishes a JWK Set at a fresh fixture URL (or over `name`'s); answers the URL. */
async function publish(signers: Signer[], name = `jwks-${crypto.randomUUID()}`) {
  const res = await fetch(`${env.TEST_FIXTURE_URL}/docs/${name}`, {
    method: "PUT",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ keys: signers.map((s) => s.jwk) }),
  });
  expect(res.status).toBe(204);
  return { name, url: `${env.TEST_FIXTURE_URL}/docs/${name}` };
}

describe("approving a credential-backed review re-checks it", () => {
  it("keeps the terms when the item opens, and signs rechecked_at on the approval", async () => {
    const t = Math.floor(Date.now() / 1000);
    const issuer = await newSigner("ES256", "bank-1");
    const { org, key } = await orgWithKey();
    const issuerId = await registerIssuer(org, [issuer.jwk]);
    const holder = await provenHolder(org, issuer);
    await reviewVerified(org);
    const { answer, item, recheck } = await openedBy(
      key,
      await holder.body({ iat: t - 30, exp: t + 1800 }),
    );
    expect(recheck).toEqual({
      issuer: issuerId,
      rootKey: await calculateJwkThumbprint(issuer.jwk),
      holder: answer.outcome.credential!.holder_thumbprint,
      holderKey: "active",
      agentStatus: "active",
      // The closed mandate's iat is the latest; its exp the earliest (the open one's is a day).
      notBefore: t - 30,
      notAfter: t + 1800,
      mandateExpiresAt: t + 1800,
    });

    const before = Date.now();
    const res = await resolve(org, item.id, "approve");
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ status: "resolved", decision: "approve" });
    const original = await jwtVerify(
      answer.outcome.risk_payload.jws,
      createLocalJWKSet(await keySet()),
    );
    expect(original.payload.mandate_verified).toBe(true);
    // Offline, against the key set alone.
    const { payload } = await jwtVerify(
      res.json.risk_payload!.jws,
      createLocalJWKSet(await keySet()),
      {
        issuer: original.payload.iss as string,
        typ: "risk-payload+jwt",
      },
    );
    const resolution = payload.resolution as Json;
    expect(payload).toMatchObject({ decision: "approve", mandate_verified: true });
    expect(resolution.rechecked_at).toEqual(expect.any(String));
    expect(new Date(resolution.rechecked_at).toISOString()).toBe(resolution.rechecked_at);
    expect(Date.parse(resolution.rechecked_at)).toBeGreaterThanOrEqual(before);
    expect(Date.parse(resolution.rechecked_at)).toBeLessThanOrEqual(
      Date.parse(res.json.resolved_at!),
    );
  });

  it("signs a denial without a re-check: mandate_verified false, no rechecked_at", async () => {
    const { org, answer, item } = await credentialReview();
    const res = await resolve(org, item.id, "deny");
    expect(res.status).toBe(200);
    const { payload } = await jwtVerify(
      res.json.risk_payload!.jws,
      createLocalJWKSet(await keySet()),
    );
    expect(payload).toMatchObject({
      decision: "deny",
      credential_reference: answer.outcome.credential!.reference,
      mandate_verified: false,
    });
    expect(payload.resolution).not.toHaveProperty("rechecked_at");
  });

  it("refuses when the issuer was revoked", async () => {
    const { org, issuerId, item } = await credentialReview();
    const revoked = await call(`/v1/credential-issuers/${issuerId}/revoke`, {
      method: "POST",
      token: org.token,
    });
    expect(revoked.status).toBe(200);
    await expectRecheckRefused(
      org,
      item,
      "credential_untrusted_issuer",
      "the credential's issuer has been revoked",
    );
  });

  it("refuses when the issuer's key set no longer holds the key that signed the root", async () => {
    const issuer = await newSigner("EdDSA", "rotated-out");
    const { org, key } = await orgWithKey();
    const { name, url } = await publish([issuer]);
    const created = await call("/v1/credential-issuers", {
      method: "POST",
      token: org.token,
      body: { name: "Bank", jwks_url: url },
    });
    expect(created.status).toBe(201);
    const holder = await provenHolder(org, issuer);
    await reviewVerified(org);
    const { item } = await openedBy(key, await holder.body());
    // The issuer now publishes another key only; a copy older than a day is not used, so the
    // re-check fetches what the issuer publishes now.
    await publish([await newSigner("EdDSA", "next")], name);
    await ownerSql`update credential_issuers set fetched_at = now() - interval '25 hours',
      fetch_attempted_at = now() - interval '25 hours' where id = ${created.json.id}`;
    await expectRecheckRefused(
      org,
      item,
      "credential_untrusted_issuer",
      "the credential's issuer no longer has the key that signed its root",
    );
  });

  it("refuses when the key that signed the last hop was revoked", async () => {
    const { org, agentId, answer, item } = await credentialReview();
    const thumbprint = answer.outcome.credential!.holder_thumbprint;
    const revoked = await call(`/v1/agents/${agentId}/keys/${thumbprint}/revoke`, {
      method: "POST",
      token: org.token,
    });
    expect(revoked.status).toBe(200);
    await expectRecheckRefused(
      org,
      item,
      "key_revoked",
      "the key that signed the credential's last hop has been revoked",
    );
  });

  for (const status of ["revoked", "suspended"] as const) {
    it(`refuses when the agent was ${status}`, async () => {
      const { org, agentId, item } = await credentialReview();
      const changed = await call(`/v1/agents/${agentId}`, {
        method: "PATCH",
        token: org.token,
        body: { status },
      });
      expect(changed.status).toBe(200);
      await expectRecheckRefused(org, item, `agent_${status}`, `the agent has been ${status}`);
    });
  }

  it("approves an item opened while the agent was suspended: the person judged that", async () => {
    const setup = await provenAgentOrg();
    await reviewVerified(setup.org);
    const suspended = await call(`/v1/agents/${setup.agentId}`, {
      method: "PATCH",
      token: setup.org.token,
      body: { status: "suspended" },
    });
    expect(suspended.status).toBe(200);
    const { item, recheck } = await openedBy(setup.key, await setup.body());
    expect(recheck).toMatchObject({ agentStatus: "suspended", holderKey: "active" });
    const res = await resolve(setup.org, item.id, "approve");
    expect(res.status).toBe(200);
    const { payload } = await jwtVerify(
      res.json.risk_payload!.jws,
      createLocalJWKSet(await keySet()),
    );
    expect(payload).toMatchObject({
      decision: "approve",
      mandate_verified: true,
      resolution: { rechecked_at: expect.any(String) },
    });
  });

  it("refuses when the mandate expired (its own exp, without skew, as the risk model reads it)", async () => {
    const t = Math.floor(Date.now() / 1000);
    const { org, item } = await credentialReview((setup) => setup.body({ exp: t + 3 }));
    await until((t + 3) * 1000);
    await expectRecheckRefused(
      org,
      item,
      "mandate_expired",
      `the mandate expired at ${iso(t + 3)} (exp ${t + 3})`,
    );
  });

  it("refuses when a hop expired (past the verifier's 300 s skew)", async () => {
    const t = Math.floor(Date.now() / 1000);
    // Valid when it opens, within the skew, until t + 3.
    const { org, item } = await credentialReview((setup) => setup.body({}, { exp: t - 297 }));
    await until((t + 4) * 1000);
    await expectRecheckRefused(
      org,
      item,
      "credential_expired",
      `the credential expired at ${iso(t - 297)} (its earliest exp; 300 s of clock skew allowed)`,
    );
  });

  it("refuses an item opened before the terms were kept: it can only be denied", async () => {
    const { org, item } = await credentialReview();
    await ownerSql`update reviews set recheck = null where id = ${item.id}`;
    await expectRecheckRefused(
      org,
      item,
      "not_recheckable",
      "the item opened before approvals re-checked credentials and kept nothing to re-check " +
        "it with: it can only be denied",
    );
  });
});
