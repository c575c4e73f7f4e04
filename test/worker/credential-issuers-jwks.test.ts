import { env } from "cloudflare:test";
import { exportJWK, generateKeyPair } from "jose";
import { describe, expect, it } from "vitest";
import { newSigner, type Signer } from "../support/ap2-chains";
import { ALL_KEY_SCOPES, call, newOrg } from "./support/api";
import { ownerSql } from "./support/db";
import { errorBody } from "./support/errors";
import { chainFrom, publicJwk, register, verifyWith } from "./support/issuers";

// Issuers whose keys come from a JWKS URL, served by the fixture server (test/support).

async function ownerKey() {
  const org = await newOrg();
  return { org, key: (await org.key()).key };
}

/** Publishes a document at a fresh fixture URL; answers the URL. */
async function publish(document: unknown, name = `jwks-${crypto.randomUUID()}`) {
  const res = await fetch(`${env.TEST_FIXTURE_URL}/docs/${name}`, {
    method: "PUT",
    headers: { "content-type": "application/json" },
    body: typeof document === "string" ? document : JSON.stringify(document),
  });
  expect(res.status).toBe(204);
  return { name, url: `${env.TEST_FIXTURE_URL}/docs/${name}` };
}

/** The fetches the fixture server saw for a document, with the If-None-Match each sent. */
async function gets(name: string): Promise<{ if_none_match: string | null }[]> {
  return (await fetch(`${env.TEST_FIXTURE_URL}/gets/${name}`)).json();
}

function jwks(...signers: Signer[]) {
  return { keys: signers.map(publicJwk) };
}

/** Ages the cached copy and the last attempt of an issuer, as time passing would. */
async function age(id: string, fetchedAgoMs: number, attemptedAgoMs = fetchedAgoMs) {
  await ownerSql`update credential_issuers set
    fetched_at = now() - make_interval(secs => ${fetchedAgoMs / 1000}),
    fetch_attempted_at = now() - make_interval(secs => ${attemptedAgoMs / 1000})
    where id = ${id}`;
}

async function row(id: string) {
  const [found] = await ownerSql`select fetched_jwks, etag, fetched_at, fetch_attempted_at
    from credential_issuers where id = ${id}`;
  return found as Record<string, any>;
}

describe("a JWKS URL issuer", () => {
  it("is fetched at registration; only public ES256/EdDSA signing keys are kept", async () => {
    const { key } = await ownerKey();
    const [es, ed] = await Promise.all([newSigner("ES256", "es"), newSigner("EdDSA", "ed")]);
    const rsa = await exportJWK((await generateKeyPair("RS256", { extractable: true })).publicKey);
    const priv = await exportJWK(
      (await generateKeyPair("ES256", { extractable: true })).privateKey,
    );
    const encryption = { ...publicJwk(await newSigner("ES256", "enc")), use: "enc" };
    const doc = { keys: [rsa, publicJwk(es), priv, encryption, publicJwk(ed)] };
    const { url } = await publish(doc);
    const res = await register(key, { name: "Wallet", jwks_url: url });
    expect(res.status).toBe(201);
    const strip = ({ kty, crv, x, y, kid }: Record<string, unknown>) =>
      Object.fromEntries(
        Object.entries({ kty, crv, x, y, kid }).filter(([, v]) => v !== undefined),
      );
    expect(res.json).toMatchObject({
      jwks: null,
      jwks_url: url,
      jwks_cache: { keys: [strip(es.jwk), strip(ed.jwk)], fetched_at: expect.any(String) },
    });
    expect((await verifyWith(key, await chainFrom(ed))).issuerId).toBe(res.json.id);
  });

  it("fetches nothing for a caller it cannot authenticate or who lacks issuers:write", async () => {
    const org = await newOrg();
    const { name, url } = await publish(jwks(await newSigner("ES256", "k")));
    const { id, key: revoked } = await org.key();
    await call(`/v1/api-keys/${id}/revoke`, { method: "POST", token: org.token });
    // agents:write is not enough: an issuer is a trust anchor (issuers:write).
    const reader = (await org.key(ALL_KEY_SCOPES.filter((s) => s !== "issuers:write"))).key;
    expect((await register(revoked, { name: "x", jwks_url: url })).status).toBe(401);
    expect((await register(reader, { name: "x", jwks_url: url })).status).toBe(403);
    expect(await gets(name)).toEqual([]);
  });

  it("is refused with 400 jwks_unreachable when the URL gives no usable key set", async () => {
    const { org, key } = await ownerKey();
    const rsa = await exportJWK((await generateKeyPair("RS256", { extractable: true })).publicKey);
    const cases: [string, string][] = [
      [`${env.TEST_FIXTURE_URL}/docs/missing-${crypto.randomUUID()}`, "status 404"],
      [`${env.TEST_FIXTURE_URL}/redirect`, "redirect (302) not followed"],
      [`${env.TEST_FIXTURE_URL}/big`, "body over 65536 bytes"],
      [(await publish("not json")).url, "the body is not UTF-8 JSON"],
      [(await publish({ kty: "EC" })).url, "the answer is not a JWK Set ({keys: [...]})"],
      [(await publish({ keys: [rsa] })).url, "the JWK Set has no public ES256 or EdDSA key"],
    ];
    for (const [url, message] of cases) {
      const res = await register(key, { name: "x", jwks_url: url });
      expect(res.status, url).toBe(400);
      expect(res.error).toEqual(errorBody("jwks_unreachable", [{ path: "jwks_url", message }]));
    }
    const [{ n }] = (await ownerSql`select count(*)::int as n from credential_issuers
      where org_id = ${org.id}`) as [{ n: number }];
    expect(n).toBe(0);
  });

  it("rotates: a root with an unknown kid refetches once, and verifies under the new key", async () => {
    const { key } = await ownerKey();
    const [old, rotated] = await Promise.all([
      newSigner("ES256", "2026-01"),
      newSigner("ES256", "2026-02"),
    ]);
    const { name, url } = await publish(jwks(old));
    const created = await register(key, { name: "Bank", jwks_url: url });
    expect(created.status).toBe(201);
    const { etag } = await row(created.json.id);
    await age(created.json.id, 1000, 2 * 60_000);
    await publish(jwks(rotated), name);

    const verdict = await verifyWith(key, await chainFrom(rotated));
    expect(verdict).toMatchObject({ verified: true, issuerId: created.json.id });
    // The refetch revalidated the copy it had; the document had changed, so it came whole.
    expect((await gets(name)).map((g) => g.if_none_match)).toEqual([null, etag]);
    const stored = await row(created.json.id);
    expect(stored.fetched_jwks).toEqual([{ ...publicJwk(rotated) }]);
    // The old key is gone from the set: it verifies nothing any more.
    expect(await verifyWith(key, await chainFrom(old))).toMatchObject({
      verified: false,
      failure: "untrusted_issuer",
    });
  });

  it("refetches for unknown kids at most once a minute", async () => {
    const { key } = await ownerKey();
    const [known, stranger, later] = await Promise.all([
      newSigner("EdDSA", "known"),
      newSigner("EdDSA", "stranger"),
      newSigner("EdDSA", "later"),
    ]);
    const { name, url } = await publish(jwks(known));
    const created = await register(key, { name: "Bank", jwks_url: url });
    await age(created.json.id, 1000, 2 * 60_000);
    for (let i = 0; i < 3; i++) {
      const verdict = await verifyWith(key, await chainFrom(stranger));
      expect(verdict.failure).toBe("untrusted_issuer");
    }
    expect(await gets(name)).toHaveLength(2);
    // Within the minute, even a key that has since been published waits for the next one.
    await publish(jwks(known, later), name);
    expect((await verifyWith(key, await chainFrom(later))).failure).toBe("untrusted_issuer");
    expect(await gets(name)).toHaveLength(2);
    expect((await verifyWith(key, await chainFrom(known))).verified).toBe(true);
  });

  it("refreshes a stale copy after the answer, revalidating with its ETag", async () => {
    const { key } = await ownerKey();
    const issuer = await newSigner("ES256", "k");
    const { name, url } = await publish(jwks(issuer));
    const created = await register(key, { name: "Bank", jwks_url: url });
    const { etag } = await row(created.json.id);
    expect(etag).toMatch(/^"[\w-]+"$/);
    await age(created.json.id, 10 * 60_000);
    const before = await row(created.json.id);

    expect((await verifyWith(key, await chainFrom(issuer))).verified).toBe(true);
    expect((await gets(name)).map((g) => g.if_none_match)).toEqual([null, etag]);
    const after = await row(created.json.id);
    expect(after.fetched_jwks).toEqual(before.fetched_jwks);
    expect(Date.parse(after.fetched_at)).toBeGreaterThan(
      Date.parse(before.fetched_at) + 9 * 60_000,
    );
  });

  it("refuses a kid it never had when the refetch fails, and keeps the cached keys", async () => {
    const { key } = await ownerKey();
    const [cached, unknown] = await Promise.all([
      newSigner("ES256", "cached"),
      newSigner("ES256", "unknown"),
    ]);
    const { name, url } = await publish(jwks(cached));
    const created = await register(key, { name: "Bank", jwks_url: url });
    await publish("down for maintenance", name);
    await age(created.json.id, 1000, 2 * 60_000);

    const refused = await verifyWith(key, await chainFrom(unknown));
    expect(refused).toMatchObject({ verified: false, failure: "untrusted_issuer" });
    expect(await gets(name)).toHaveLength(2);
    expect((await verifyWith(key, await chainFrom(cached))).verified).toBe(true);
    const stored = await row(created.json.id);
    expect(stored.fetched_jwks).toEqual([publicJwk(cached)]);
    expect(Date.parse(stored.fetch_attempted_at)).toBeGreaterThan(Date.parse(stored.fetched_at));
  });

  it("keeps verifying with a stale copy while its refresh fails", async () => {
    const { key } = await ownerKey();
    const issuer = await newSigner("EdDSA", "stale");
    const { name, url } = await publish(jwks(issuer));
    const created = await register(key, { name: "Bank", jwks_url: url });
    await publish("down for maintenance", name);
    await age(created.json.id, 10 * 60_000);
    expect((await verifyWith(key, await chainFrom(issuer))).verified).toBe(true);
    expect(await gets(name)).toHaveLength(2);
    expect((await row(created.json.id)).fetched_jwks).toEqual([publicJwk(issuer)]);
  });

  it("does not use a copy older than 24 hours when the URL fails", async () => {
    const { key } = await ownerKey();
    const issuer = await newSigner("EdDSA", "old");
    const { name, url } = await publish(jwks(issuer));
    const created = await register(key, { name: "Bank", jwks_url: url });
    await publish("gone", name);
    await age(created.json.id, 25 * 60 * 60_000);
    const verdict = await verifyWith(key, await chainFrom(issuer));
    expect(verdict).toMatchObject({ verified: false, failure: "untrusted_issuer" });
  });
});
