import { env } from "cloudflare:test";
import { exportJWK, generateKeyPair, type JWK } from "jose";
import { describe, expect, it } from "vitest";
import { payloadDigest } from "#audit/digest";
import { parseChain } from "../../src/ap2-credentials/chain";
import { trustAnchorsFor } from "../../src/ap2-credentials/issuers";
import { verifyChain } from "../../src/ap2-credentials/verify";
import { readCredential } from "../../src/auth/credential";
import { Tenant } from "../../src/auth/tenant";
import untrusted from "../fixtures/ap2-v0.2-vectors/payment_invalid_untrusted_root.json";
import valid from "../fixtures/ap2-v0.2-vectors/payment_valid_basic.json";
import { newSigner } from "../support/ap2-chains";
import { ALL_KEY_SCOPES, call, callRaw, newOrg, type TestOrg } from "./support/api";
import { addMember, ownerSql } from "./support/db";
import { errorBody } from "./support/errors";
import { newPrincipal } from "./support/identity";
import { chainFrom, publicJwk, register, registerRaw, verifyWith } from "./support/issuers";

async function ownerKey() {
  const org = await newOrg();
  return { org, key: (await org.key()).key };
}

describe("POST /v1/credential-issuers", () => {
  it("registers inline keys and answers the record, keeping kid and the RFC 7638 members", async () => {
    const { key } = await ownerKey();
    const signer = await newSigner("ES256", "bank-2026");
    const jwk = { ...publicJwk(signer), alg: "ES256", use: "sig", x5u: "https://x.example" };
    const res = await register(key, { name: "Demo Bank", jwks: { keys: [jwk] } });
    expect(res.status).toBe(201);
    const { kty, crv, x, y } = signer.jwk;
    expect(res.json).toEqual({
      object: "credential_issuer",
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      name: "Demo Bank",
      jwks: { keys: [{ kty, crv, x, y, kid: "bank-2026" }] },
      jwks_url: null,
      jwks_cache: null,
      principal_id: null,
      required_constraints: [],
      status_required: false,
      status: "active",
      created: expect.any(String),
      revoked_at: null,
    });
  });

  it("records credential_issuer.created in the ledger over the record it answered", async () => {
    const { org, key } = await ownerKey();
    const signer = await newSigner("EdDSA");
    const res = await register(key, { name: "Wallet", jwks: { keys: [publicJwk(signer)] } });
    expect(res.status).toBe(201);
    const entries = await ownerSql`select subject_type, subject_id, digest from audit_entries
      where org_id = ${org.id} and type = 'credential_issuer.created'`;
    expect(entries).toEqual([
      {
        subject_type: "credential_issuer",
        subject_id: res.json.id,
        digest: payloadDigest(res.json),
      },
    ]);
  });

  it("links the principal whose own key it is; another org's is 400, an erased one 409", async () => {
    const { org, key } = await ownerKey();
    const signer = await newSigner("EdDSA");
    const jwks = { keys: [publicJwk(signer)] };
    const principalId = await newPrincipal(org);
    const linked = await register(key, { name: "Ada's key", jwks, principal_id: principalId });
    expect(linked.status).toBe(201);
    expect(linked.json.principal_id).toBe(principalId);

    const foreign = await newPrincipal(await newOrg());
    const other = await register(key, { name: "x", jwks, principal_id: foreign });
    expect(other.status).toBe(400);
    expect(other.json).toEqual(
      errorBody("invalid_request", [{ path: "principal_id", message: "no such principal" }]),
    );

    const erasedId = await newPrincipal(org);
    const erase = await call(`/v1/principals/${erasedId}/erase`, { method: "POST", key });
    expect(erase.status).toBe(200);
    const erased = await register(key, { name: "x", jwks, principal_id: erasedId });
    expect(erased.status).toBe(409);
    expect(erased.error.error).toBe("principal_erased");
    const [{ n }] = (await ownerSql`select count(*)::int as n from credential_issuers
      where org_id = ${org.id}`) as [{ n: number }];
    expect(n).toBe(1);
  });
});

describe("who may register a trust anchor", () => {
  // Every scope a key may hold but the issuer registry's: agents:write included.
  const NOT_ISSUERS = ALL_KEY_SCOPES.filter((s) => !s.startsWith("issuers:"));

  it("refuses an agents:write key: 403 insufficient_scope, nothing stored, its root untrusted", async () => {
    const org = await newOrg();
    const { key } = await org.key(NOT_ISSUERS);
    const own = await newSigner("ES256", "self-signed");
    const res = await register(key, { name: "Mine", jwks: { keys: [publicJwk(own)] } });
    expect(res.status).toBe(403);
    expect(res.error).toEqual(errorBody("insufficient_scope", { required: "issuers:write" }));
    const [{ n }] = (await ownerSql`select count(*)::int as n from credential_issuers
      where org_id = ${org.id}`) as [{ n: number }];
    expect(n).toBe(0);
    const reader = (await org.key(["issuers:read"])).key;
    expect(await verifyWith(reader, await chainFrom(own))).toMatchObject({
      verified: false,
      failure: "untrusted_issuer",
    });
  });

  it("refuses an agents:write key the revocation, and leaves the issuer active", async () => {
    const org = await newOrg();
    const created = await register((await org.key(["issuers:write"])).key, {
      name: "Bank",
      jwks: { keys: [publicJwk(await newSigner("EdDSA"))] },
    });
    expect(created.status).toBe(201);
    const { key } = await org.key(NOT_ISSUERS);
    const res = await call(`/v1/credential-issuers/${created.json.id}/revoke`, {
      method: "POST",
      key,
    });
    expect(res.status).toBe(403);
    expect(res.error).toEqual(errorBody("insufficient_scope", { required: "issuers:write" }));
    const [row] = await ownerSql`select status from credential_issuers
      where id = ${created.json.id}`;
    expect(row).toEqual({ status: "active" });
  });

  it("lets a key created with only issuers:write register and revoke, and issuers:read read", async () => {
    const org = await newOrg();
    const made = await call("/v1/api-keys", {
      method: "POST",
      token: org.token,
      body: { name: "trust anchors", scopes: ["issuers:write"] },
    });
    expect(made.status).toBe(201);
    expect(made.json.scopes).toEqual(["issuers:write"]);
    const key = made.json.key as string;
    const issuer = await newSigner("ES256", "bank");
    const created = await register(key, { name: "Bank", jwks: { keys: [publicJwk(issuer)] } });
    expect(created.status).toBe(201);
    const reader = (await org.key(["issuers:read"])).key;
    expect((await verifyWith(reader, await chainFrom(issuer))).issuerId).toBe(created.json.id);
    const read = await call(`/v1/credential-issuers/${created.json.id}`, { key: reader });
    expect(read.status).toBe(200);
    expect(read.json).toEqual(created.json);
    const listed = await call("/v1/credential-issuers", { key: reader });
    expect(listed.json.data).toEqual([created.json]);
    const agentsReader = (await org.key(["agents:read", "agents:write"])).key;
    const hidden = await call("/v1/credential-issuers", { key: agentsReader });
    expect(hidden.status).toBe(403);
    expect(hidden.error).toEqual(errorBody("insufficient_scope", { required: "issuers:read" }));
    const notWriter = await register(reader, { name: "x", jwks: { keys: [publicJwk(issuer)] } });
    expect(notWriter.status).toBe(403);
    const revoked = await call(`/v1/credential-issuers/${created.json.id}/revoke`, {
      method: "POST",
      key,
    });
    expect(revoked.status).toBe(200);
    expect(revoked.json.status).toBe("revoked");
  });

  it("lets owner and admin sessions register and revoke, and not a member's", async () => {
    const org = await newOrg();
    const admin = await newOrg();
    const member = await newOrg();
    await addMember(org.id, admin.subject, "admin");
    await addMember(org.id, member.subject, "member");
    const jwks = { keys: [publicJwk(await newSigner("EdDSA"))] };
    const as = (who: TestOrg, path: string, body?: unknown) =>
      callRaw(path, {
        method: "POST",
        token: who.token,
        headers: { "x-org-id": org.id },
        ...(body ? { body } : {}),
      });

    const byMember = await as(member, "/v1/credential-issuers", { name: "M", jwks });
    expect(byMember.status).toBe(403);
    expect(byMember.error).toEqual(errorBody("insufficient_scope", { required: "issuers:write" }));
    const byOwner = await as(org, "/v1/credential-issuers", { name: "O", jwks });
    expect(byOwner.status).toBe(201);
    const byAdmin = await as(admin, "/v1/credential-issuers", { name: "A", jwks });
    expect(byAdmin.status).toBe(201);
    const memberRevokes = await as(member, `/v1/credential-issuers/${byOwner.json.id}/revoke`);
    expect(memberRevokes.status).toBe(403);
    const memberReads = await call("/v1/credential-issuers", {
      token: member.token,
      headers: { "x-org-id": org.id },
    });
    expect(memberReads.status).toBe(403);
    const adminRevokes = await as(admin, `/v1/credential-issuers/${byOwner.json.id}/revoke`);
    expect(adminRevokes.status).toBe(200);
    const adminReads = await call("/v1/credential-issuers", {
      token: admin.token,
      headers: { "x-org-id": org.id },
    });
    expect(adminReads.json.data.map((i: { id: string }) => i.id)).toEqual([
      byAdmin.json.id,
      byOwner.json.id,
    ]);
  });
});

describe("POST /v1/credential-issuers validation", () => {
  let org: TestOrg;
  let key: string;
  let good: Record<string, unknown>;

  async function refused(body: Record<string, unknown>) {
    org ??= await newOrg();
    key ??= (await org.key()).key;
    const res = await registerRaw(key, body);
    return res;
  }

  async function goodKey() {
    good ??= publicJwk(await newSigner("ES256", "k1"));
    return good;
  }

  it("refuses a private key (d) with 400 and the key's path", async () => {
    const { privateKey } = await generateKeyPair("ES256", { extractable: true });
    const jwk = await exportJWK(privateKey);
    const res = await refused({ name: "x", jwks: { keys: [jwk] } });
    expect(res.status).toBe(400);
    expect(res.json).toEqual(
      errorBody("invalid_request", [
        {
          path: "jwks.keys.0",
          message: "the key carries private key material (ES256 or EdDSA public keys only)",
          code: "custom",
        },
      ]),
    );
  });

  it("refuses keys of any algorithm but ES256 and EdDSA", async () => {
    for (const alg of ["RS256", "ES384"] as const) {
      const { publicKey } = await generateKeyPair(alg, { extractable: true });
      const res = await refused({ name: "x", jwks: { keys: [await exportJWK(publicKey)] } });
      expect(res.status, alg).toBe(400);
      expect(res.error.details[0].path).toBe("jwks.keys.0");
    }
    const mislabelled = { ...(await goodKey()), alg: "EdDSA" };
    const res = await refused({ name: "x", jwks: { keys: [mislabelled] } });
    expect(res.status).toBe(400);
    expect(res.error.details[0].message).toBe(
      "the key says alg EdDSA (ES256 or EdDSA public keys only)",
    );
  });

  it("refuses a P-256 point that is not on the curve", async () => {
    const offCurve = { ...(await goodKey()), y: "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA" };
    const res = await refused({ name: "x", jwks: { keys: [offCurve] } });
    expect(res.status).toBe(400);
    expect(res.error.details).toEqual([
      {
        path: "jwks.keys.0",
        message: "the key is not a valid public key (WebCrypto refuses it)",
        code: "custom",
      },
    ]);
  });

  it("refuses a kid twice, an empty key set, both or neither of jwks and jwks_url", async () => {
    const k = await goodKey();
    const twice = await refused({ name: "x", jwks: { keys: [k, { ...k, x: k.y }] } });
    expect(twice.status).toBe(400);
    expect(twice.error.details[0]).toMatchObject({ path: "jwks.keys", message: "kid k1 is twice" });
    const empty = await refused({ name: "x", jwks: { keys: [] } });
    expect(empty.status).toBe(400);
    for (const body of [
      { name: "x" },
      { name: "x", jwks: { keys: [k] }, jwks_url: "https://issuer.example/jwks.json" },
    ]) {
      const res = await refused(body);
      expect(res.status).toBe(400);
      expect(res.error.details).toEqual([
        { path: "jwks", message: "give exactly one of jwks, jwks_url", code: "custom" },
      ]);
    }
  });

  it("refuses a jwks_url the outbound guard refuses: plain http, private addresses", async () => {
    for (const [url, reason] of [
      ["http://issuer.example.com/jwks.json", "http_not_allowed"],
      ["https://169.254.169.254/jwks.json", "metadata_endpoint"],
      ["https://10.0.0.7/jwks.json", "private_address"],
      ["ftp://issuer.example/jwks.json", "scheme_not_allowed"],
    ] as const) {
      const res = await refused({ name: "x", jwks_url: url });
      expect(res.status, url).toBe(400);
      expect(res.json).toEqual(
        errorBody("url_not_allowed", [{ path: "jwks_url", message: `refused: ${reason}` }]),
      );
    }
    const [{ n }] = (await ownerSql`select count(*)::int as n from credential_issuers
      where org_id = ${org.id}`) as [{ n: number }];
    expect(n).toBe(0);
  });
});

describe("trustAnchorsFor", () => {
  it("verifies a root with the active issuer key of its kid and names that issuer", async () => {
    const { key } = await ownerKey();
    const [first, second] = await Promise.all([
      newSigner("ES256", "first"),
      newSigner("EdDSA", "second"),
    ]);
    const a = await register(key, { name: "A", jwks: { keys: [publicJwk(first)] } });
    const b = await register(key, { name: "B", jwks: { keys: [publicJwk(second)] } });
    expect([a.status, b.status]).toEqual([201, 201]);
    const verdict = await verifyWith(key, await chainFrom(second));
    expect(verdict).toMatchObject({ verified: true, failure: null, issuerId: b.json.id });
  });

  it("matches a root without kid by trying each key, and a kid-less key by its thumbprint", async () => {
    const { key } = await ownerKey();
    const issuer = await newSigner("ES256");
    const res = await register(key, { name: "Kid-less", jwks: { keys: [publicJwk(issuer)] } });
    const bare = await verifyWith(key, await chainFrom(issuer));
    expect(bare).toMatchObject({ verified: true, issuerId: res.json.id });
    const { calculateJwkThumbprint } = await import("jose");
    const thumbprint = await calculateJwkThumbprint(issuer.jwk as JWK);
    const named = await verifyWith(key, await chainFrom(issuer, { kid: thumbprint }));
    expect(named).toMatchObject({ verified: true, issuerId: res.json.id });
  });

  it("verifies the SDK's vector under its trusted key registered through the API", async () => {
    const { key } = await ownerKey();
    const [trusted] = valid.trusted_keys;
    const res = await register(key, { name: "User", jwks: { keys: [trusted!.jwk] } });
    expect(res.status).toBe(201);
    const tenant = new Tenant(
      env,
      await readCredential((name) => (name === "x-api-key" ? key : undefined), env),
      "agents:read",
      () => {},
    );
    for (const vector of [valid, untrusted]) {
      const chain = parseChain(vector.credential);
      const verdict = await verifyChain(chain, {
        anchors: await trustAnchorsFor(tenant, env, chain.hops[0]?.header),
        presentation: {
          aud: vector.expected_aud,
          nonce: vector.expected_nonce,
          checkout_jwt: vector.constraint_inputs.checkout_jwt,
        },
        now: vector.verify_params.current_time,
      });
      expect(verdict.issuerId, vector.name).toBe(vector === valid ? res.json.id : null);
      expect(verdict.failure, vector.name).toBe(vector === valid ? null : "untrusted_issuer");
    }
  });

  it("never trusts another org's issuer: untrusted_issuer", async () => {
    const owner = await ownerKey();
    const issuer = await newSigner("ES256", "shared-kid");
    expect(
      (await register(owner.key, { name: "A", jwks: { keys: [publicJwk(issuer)] } })).status,
    ).toBe(201);
    const intruder = await ownerKey();
    const verdict = await verifyWith(intruder.key, await chainFrom(issuer));
    expect(verdict).toMatchObject({ verified: false, failure: "untrusted_issuer", issuerId: null });
  });
});

describe("GET /v1/credential-issuers", () => {
  it("lists newest first with a cursor, and filters by status", async () => {
    const { key } = await ownerKey();
    const jwks = { keys: [publicJwk(await newSigner("EdDSA"))] };
    const ids: string[] = [];
    for (const name of ["one", "two", "three"]) {
      ids.push((await register(key, { name, jwks })).json.id);
    }
    const revoked = await call(`/v1/credential-issuers/${ids[1]}/revoke`, { method: "POST", key });
    expect(revoked.status).toBe(200);

    const first = await call("/v1/credential-issuers?limit=2", { key });
    expect(first.status).toBe(200);
    expect(first.json.data.map((i: { id: string }) => i.id)).toEqual([ids[2], ids[1]]);
    expect(first.json).toMatchObject({ object: "list", has_more: true });
    const second = await call(`/v1/credential-issuers?limit=2&cursor=${first.json.next_cursor}`, {
      key,
    });
    expect(second.json).toMatchObject({ has_more: false, next_cursor: null });
    expect(second.json.data.map((i: { id: string }) => i.id)).toEqual([ids[0]]);

    const active = await call("/v1/credential-issuers?status=active", { key });
    expect(active.json.data.map((i: { id: string }) => i.id)).toEqual([ids[2], ids[0]]);
    const onlyRevoked = await call("/v1/credential-issuers?status=revoked", { key });
    expect(onlyRevoked.json.data).toEqual([revoked.json]);
    const bad = await call("/v1/credential-issuers?status=paused", { key });
    expect(bad.status).toBe(400);
    expect(bad.error.error).toBe("invalid_request");
  });

  it("reads one issuer by id, and nobody else's", async () => {
    const { key } = await ownerKey();
    const created = await register(key, {
      name: "Bank",
      jwks: { keys: [publicJwk(await newSigner("ES256", "b"))] },
    });
    const read = await call(`/v1/credential-issuers/${created.json.id}`, { key });
    expect(read.status).toBe(200);
    expect(read.json).toEqual(created.json);
    const intruder = await ownerKey();
    const foreign = await call(`/v1/credential-issuers/${created.json.id}`, { key: intruder.key });
    expect(foreign.status).toBe(404);
    expect(foreign.error).toEqual(errorBody("not_found"));
    const listed = await call("/v1/credential-issuers", { key: intruder.key });
    expect(listed.json.data).toEqual([]);
  });
});

describe("POST /v1/credential-issuers/{id}/revoke", () => {
  it("revokes once: the next verification is untrusted_issuer, a repeat answers the same record", async () => {
    const { org, key } = await ownerKey();
    const issuer = await newSigner("ES256", "bank-1");
    const created = await register(key, { name: "Bank", jwks: { keys: [publicJwk(issuer)] } });
    const chain = await chainFrom(issuer);
    expect((await verifyWith(key, chain)).verified).toBe(true);

    const res = await call(`/v1/credential-issuers/${created.json.id}/revoke`, {
      method: "POST",
      key,
    });
    expect(res.status).toBe(200);
    expect(res.json).toEqual({
      ...created.json,
      status: "revoked",
      revoked_at: expect.any(String),
    });
    expect(await verifyWith(key, chain)).toMatchObject({
      verified: false,
      failure: "untrusted_issuer",
    });

    const again = await call(`/v1/credential-issuers/${created.json.id}/revoke`, {
      method: "POST",
      key,
    });
    expect(again.status).toBe(200);
    expect(again.json).toEqual(res.json);
    const entries = await ownerSql`select digest from audit_entries
      where org_id = ${org.id} and type = 'credential_issuer.revoked'`;
    expect(entries).toEqual([
      { digest: payloadDigest({ id: created.json.id, revoked_at: res.json.revoked_at }) },
    ]);
  });

  it("answers 404 for another org's issuer and leaves it active", async () => {
    const owner = await ownerKey();
    const created = await register(owner.key, {
      name: "Bank",
      jwks: { keys: [publicJwk(await newSigner("EdDSA"))] },
    });
    const intruder = await ownerKey();
    const res = await call(`/v1/credential-issuers/${created.json.id}/revoke`, {
      method: "POST",
      key: intruder.key,
    });
    expect(res.status).toBe(404);
    expect(res.error).toEqual(errorBody("not_found"));
    const read = await call(`/v1/credential-issuers/${created.json.id}`, { key: owner.key });
    expect(read.json.status).toBe("active");
  });
});
