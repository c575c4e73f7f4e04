import { env } from "cloudflare:test";
import { compactVerify, createLocalJWKSet, decodeProtectedHeader } from "jose";
import { describe, expect, it } from "vitest";
import type { Env } from "../../src/env";
import { signer } from "../../src/signing/signer";
import { call } from "./support/api";
import { verifyJws } from "./support/jws";

async function freshPublicJwk() {
  const pair = (await crypto.subtle.generateKey({ name: "Ed25519" }, true, [
    "sign",
    "verify",
  ])) as CryptoKeyPair;
  return (await crypto.subtle.exportKey("jwk", pair.publicKey)) as JsonWebKey;
}

async function freshP256Jwk() {
  const pair = (await crypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, true, [
    "sign",
    "verify",
  ])) as CryptoKeyPair;
  const { kty, crv, x, y, d } = (await crypto.subtle.exportKey(
    "jwk",
    pair.privateKey,
  )) as JsonWebKey;
  return { kty, crv, x, y, d };
}

describe("the ES256 signer", () => {
  it("signs claims ES256 that verify against the published key set, as a client would", async () => {
    const { json } = await call("/.well-known/jwks.json");
    const s = await signer(env);
    const jws = await s.es256.signClaims({ result: "success" }, "JWT");
    expect(decodeProtectedHeader(jws)).toEqual({ alg: "ES256", kid: s.es256.kid, typ: "JWT" });
    const { payload, key } = await compactVerify(jws, createLocalJWKSet(json), {
      algorithms: ["ES256"],
    });
    expect(JSON.parse(new TextDecoder().decode(payload))).toEqual({ result: "success" });
    expect(key).toBeDefined();
    expect(s.es256.kid).toBe(json.keys[1]?.kid);
  });

  it.each<[string, Partial<Env>]>([
    ["missing", { SIGNING_KEY_ES256: undefined }],
    ["not JSON", { SIGNING_KEY_ES256: "not json" }],
    ["an Ed25519 key", { SIGNING_KEY_ES256: env.SIGNING_KEY }],
    [
      "a public key only",
      { SIGNING_KEY_ES256: JSON.stringify({ kty: "EC", crv: "P-256", x: "AAAA", y: "AAAA" }) },
    ],
  ])(
    "refuses to sign ES256 with a key that is %s (503), and EdDSA goes on",
    async (_, override) => {
      const s = await signer({ ...env, ...override });
      expect(s.es256.kid).toBeNull();
      await expect(s.es256.signClaims({ a: 1 }, "JWT")).rejects.toMatchObject({
        code: "signing_key_unavailable",
        status: 503,
      });
      expect((await verifyJws(await s.signClaims({ a: 1 }, "JWT"), s.keys)).valid).toBe(true);
    },
  );

  it("refuses a P-256 private key whose public half does not match", async () => {
    const own = JSON.parse(env.SIGNING_KEY_ES256 as string);
    const other = await freshP256Jwk();
    const s = await signer({
      ...env,
      SIGNING_KEY_ES256: JSON.stringify({ ...own, x: other.x, y: other.y }),
    });
    await expect(s.es256.signClaims({ a: 1 }, "JWT")).rejects.toMatchObject({ status: 503 });
  });

  it("refuses retired P-256 keys that carry private material", async () => {
    const own = JSON.parse(env.SIGNING_KEY_ES256 as string);
    await expect(
      signer({ ...env, SIGNING_KEYS_RETIRED: JSON.stringify([own]) }),
    ).rejects.toMatchObject({ status: 503 });
  });
});

describe("the signer", () => {
  it("signs claims that verify against the published key set with WebCrypto", async () => {
    const { json } = await call("/.well-known/jwks.json");
    const s = await signer(env);
    const jws = await s.signClaims({ assessment_id: "a1", decision: "review" }, "risk-payload+jwt");
    const result = await verifyJws(jws, json.keys);
    expect(result.valid).toBe(true);
    expect(result.header).toEqual({ alg: "EdDSA", kid: s.kid, typ: "risk-payload+jwt" });
    expect(JSON.parse(result.payload)).toEqual({
      assessment_id: "a1",
      decision: "review",
    });
  });

  it("signs exact bytes, and a changed byte fails verification", async () => {
    const s = await signer(env);
    const body = new TextEncoder().encode('{"id":"evt_1","amount":100}');
    const jws = await s.signBytes(body, "JOSE");
    expect((await verifyJws(jws, s.keys)).valid).toBe(true);
    const [h, , sig] = jws.split(".");
    const tampered = new TextEncoder().encode('{"id":"evt_1","amount":900}');
    const forged = `${h}.${btoa(String.fromCharCode(...tampered))
      .replaceAll("=", "")
      .replaceAll("+", "-")
      .replaceAll("/", "_")}.${sig}`;
    expect((await verifyJws(forged, s.keys)).valid).toBe(false);
  });

  it("publishes retired keys after the current one, so old payloads still verify", async () => {
    const retired = await freshPublicJwk();
    const s = await signer({ ...env, SIGNING_KEYS_RETIRED: JSON.stringify([retired]) });
    expect(s.keys).toHaveLength(2);
    expect(s.keys[0]?.kid).toBe(s.kid);
    expect(s.keys[1]?.x).toBe(retired.x);
  });

  it("publishes retired keys of either kind after both current keys", async () => {
    const ed25519 = await freshPublicJwk();
    const p256 = await freshP256Jwk();
    const { d: _, ...p256Public } = p256;
    const s = await signer({
      ...env,
      SIGNING_KEYS_RETIRED: JSON.stringify([p256Public, ed25519]),
    });
    expect(s.published.map((k) => [k.alg, k.x])).toEqual([
      ["EdDSA", s.keys[0]?.x],
      ["ES256", s.es256.keys[0]?.x],
      ["EdDSA", ed25519.x],
      ["ES256", p256.x],
    ]);
    expect(s.es256.keys.map((k) => k.kid)).toEqual([s.es256.kid, s.published[3]?.kid]);
    // What verifies EdDSA stays Ed25519 only.
    expect(s.keys.map((k) => k.alg)).toEqual(["EdDSA", "EdDSA"]);
  });

  it.each<[string, Partial<Env>]>([
    ["missing", { SIGNING_KEY: undefined }],
    ["not JSON", { SIGNING_KEY: "not json" }],
    [
      "a public key only",
      { SIGNING_KEY: JSON.stringify({ kty: "OKP", crv: "Ed25519", x: "AAAA" }) },
    ],
    [
      "an EC key",
      { SIGNING_KEY: JSON.stringify({ kty: "EC", crv: "P-256", x: "a", y: "b", d: "c" }) },
    ],
  ])("refuses a signing key that is %s with 503", async (_, override) => {
    await expect(signer({ ...env, ...override })).rejects.toMatchObject({
      code: "signing_key_unavailable",
      status: 503,
    });
  });

  it("refuses a private key whose public half does not match", async () => {
    const own = JSON.parse(env.SIGNING_KEY as string);
    const other = await freshPublicJwk();
    const mismatched = JSON.stringify({ ...own, x: other.x });
    await expect(signer({ ...env, SIGNING_KEY: mismatched })).rejects.toMatchObject({
      status: 503,
    });
  });

  it("refuses retired keys that carry private material", async () => {
    const own = JSON.parse(env.SIGNING_KEY as string);
    await expect(
      signer({ ...env, SIGNING_KEYS_RETIRED: JSON.stringify([own]) }),
    ).rejects.toMatchObject({
      status: 503,
    });
  });
});
