import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { exportJWK, generateKeyPair, type JWK, SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { VerificationError, verifyRiskPayload } from "../src/index.js";

// verifyRiskPayload against payloads signed here the way src/signing/signer.ts signs them:
// EdDSA, kid and typ in the protected header, the claims of src/assess/risk-payload.ts.

const ISSUER = "https://risk.example";
let privateKey: CryptoKey;
let jwk: JWK;
let jwksUrl: string;
let keySetFetches = 0;
let server: ReturnType<typeof createServer>;

beforeAll(async () => {
  const pair = await generateKeyPair("EdDSA", { crv: "Ed25519" });
  privateKey = pair.privateKey;
  jwk = { ...(await exportJWK(pair.publicKey)), kid: "k1", alg: "EdDSA", use: "sig" };
  server = createServer((_req, res) => {
    keySetFetches++;
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ keys: [jwk] }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  jwksUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/.well-known/jwks.json`;
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

function claims(changes: Record<string, unknown> = {}) {
  const iat = Math.floor(Date.now() / 1000);
  return {
    iss: ISSUER,
    sub: "asm_1",
    aud: "merchant-1",
    iat,
    exp: iat + 300,
    jti: "rp_1",
    livemode: true,
    log_id: "0".repeat(32),
    assessment_id: "asm_1",
    mandate_id: "tx-1",
    mandate_hash: `sha256:${"a".repeat(64)}`,
    kind: "ap2_payment",
    decision: "approve",
    risk_score: 12,
    risk_level: "normal",
    policy_version: 1,
    agent_id: null,
    credential_reference: null,
    mandate_verified: false,
    ...changes,
  };
}

function sign(
  body: Record<string, unknown>,
  header: Record<string, unknown> = {},
  key = privateKey,
) {
  return new SignJWT(body)
    .setProtectedHeader({ alg: "EdDSA", kid: "k1", typ: "risk-payload+jwt", ...header })
    .sign(key);
}

async function refusal(jws: string, options: Record<string, unknown> = {}) {
  const error = await verifyRiskPayload(jws, { jwks: { keys: [jwk] }, ...options }).catch((e) => e);
  expect(error).toBeInstanceOf(VerificationError);
  return (error as VerificationError).code;
}

describe("verifyRiskPayload", () => {
  it("returns the claims of a valid payload", async () => {
    const expected = claims();
    const verified = await verifyRiskPayload(await sign(expected), {
      jwks: { keys: [jwk] },
      issuer: ISSUER,
      audience: "merchant-1",
      maxAgeSeconds: 60,
    });
    expect(verified).toEqual(expected);
  });

  it("refuses a test-mode payload unless told to accept one", async () => {
    const test = await sign(claims({ livemode: false }));
    expect(await refusal(test)).toBe("test_mode");
    expect(await refusal(await sign(claims({ livemode: "false" })))).toBe("test_mode");
    const accepted = await verifyRiskPayload(test, { jwks: { keys: [jwk] }, allowTestMode: true });
    expect(accepted.livemode).toBe(false);
  });

  it("refuses another typ: no other signed object of the service passes as a verdict", async () => {
    expect(await refusal(await sign(claims(), { typ: "webhook+jws" }))).toBe("claim_invalid");
  });

  it("refuses an expired payload", async () => {
    const past = Math.floor(Date.now() / 1000) - 600;
    expect(await refusal(await sign(claims({ iat: past, exp: past + 300 })))).toBe("expired");
  });

  it("refuses another issuer or audience when they are expected", async () => {
    const jws = await sign(claims());
    expect(await refusal(jws, { issuer: "https://evil.example" })).toBe("claim_invalid");
    expect(await refusal(jws, { audience: "merchant-2" })).toBe("claim_invalid");
  });

  it("refuses a payload older than maxAgeSeconds although exp is later", async () => {
    const iat = Math.floor(Date.now() / 1000) - 120;
    expect(await refusal(await sign(claims({ iat, exp: iat + 3600 })), { maxAgeSeconds: 60 })).toBe(
      "expired",
    );
  });

  it("refuses a signature by a key outside the set", async () => {
    const other = await generateKeyPair("EdDSA", { crv: "Ed25519" });
    expect(await refusal(await sign(claims(), {}, other.privateKey))).toBe("signature_invalid");
  });

  it("refuses every algorithm but EdDSA", async () => {
    const es = await generateKeyPair("ES256");
    const esJwk = { ...(await exportJWK(es.publicKey)), kid: "k1" };
    const jws = await new SignJWT(claims())
      .setProtectedHeader({ alg: "ES256", kid: "k1", typ: "risk-payload+jwt" })
      .sign(es.privateKey);
    const error = await verifyRiskPayload(jws, { jwks: { keys: [esJwk] } }).catch((e) => e);
    expect(error).toBeInstanceOf(VerificationError);
  });

  it("fetches a remote key set once and reuses it", async () => {
    const before = keySetFetches;
    for (let i = 0; i < 3; i++) {
      const verified = await verifyRiskPayload(await sign(claims()), { jwksUrl, issuer: ISSUER });
      expect(verified.decision).toBe("approve");
    }
    expect(keySetFetches - before).toBe(1);
  });
});
