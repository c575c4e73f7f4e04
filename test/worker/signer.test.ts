import { env } from "cloudflare:test";
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
