import { env } from "cloudflare:test";
import { createLocalJWKSet, errors, jwtVerify } from "jose";
import { describe, expect, it } from "vitest";
import { verifyRiskPayload } from "../../docs/examples/risk-payload-verify";
import { call } from "./support/api";
import {
  assess,
  assessOk,
  assessRaw,
  assessWith,
  countRows,
  decodeJwsPart,
  type Json,
  jwks,
  orgWithKey,
  payment,
  sha256Hex,
} from "./support/assess";
import { errorBody } from "./support/errors";
import { verifyJws } from "./support/jws";

// docs/assess.md, "The Risk Payload": bound to the service (iss), to the verifier the request
// names (aud), to a time (iat, exp), to a mode (livemode) and to the org by its public log id,
// never by its internal id.

const ISSUER = env.PUBLIC_BASE_URL as string;
const PSP = "https://psp.example";
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** The org's transparency log id, computed here from its documented definition. */
async function logIdOf(orgId: string): Promise<string> {
  return (await sha256Hex(`agent-risk/log/v1\n${orgId}`)).slice(0, 32);
}

async function claimsOf(jws: string): Promise<Json> {
  const verified = await verifyJws(jws, await jwks());
  expect(verified.valid).toBe(true);
  return JSON.parse(verified.payload);
}

/** As a third party verifies it: jose, the published key set, its own expectations. */
async function thirdParty(jws: string, options: Parameters<typeof jwtVerify>[2]) {
  return jwtVerify(jws, createLocalJWKSet({ keys: (await jwks()) as never[] }), {
    algorithms: ["EdDSA"],
    typ: "risk-payload+jwt",
    ...options,
  });
}

describe("the Risk Payload's claims", () => {
  it("are exactly these: the service, the audience, a five-minute window, the mode and the org's log id", async () => {
    const { org, key } = await orgWithKey();
    const before = Math.floor(Date.now() / 1000);
    const body = await assessOk(key, { mandate: payment(), audience: PSP });
    const after = Math.ceil(Date.now() / 1000);
    const claims = await claimsOf(body.riskPayloadJws);
    const o = body.outcome;
    expect(claims).toEqual({
      iss: ISSUER,
      sub: o.id,
      aud: PSP,
      iat: expect.any(Number),
      exp: claims.iat + 300,
      jti: expect.stringMatching(UUID),
      livemode: true,
      log_id: await logIdOf(org.id),
      assessment_id: o.id,
      mandate_id: body.mandateId,
      mandate_hash: expect.stringMatching(/^sha256:[0-9a-f]{64}$/),
      kind: "ap2_payment",
      decision: o.outcome.decision,
      risk_score: o.outcome.risk_score,
      risk_level: o.outcome.risk_level,
      policy_version: o.outcome.policy_version,
      agent_id: null,
      // Decoded JSON: no credential, nothing verified (a credential's: assess-credentials).
      credential_reference: null,
      mandate_verified: false,
      // Its place in the org's status list (docs/status-lists.md): test/worker/status-lists.
      status: {
        status_list: {
          idx: expect.any(Number),
          uri: `${ISSUER}/v1/status-lists/${await logIdOf(org.id)}.0`,
        },
      },
    });
    expect(claims.iat).toBeGreaterThanOrEqual(before);
    expect(claims.iat).toBeLessThanOrEqual(after);
    expect(claims.jti).not.toBe(o.id);
    // The org's internal id is nowhere in what a third party receives.
    expect(JSON.stringify(claims)).not.toContain(org.id);
    expect(JSON.stringify(decodeJwsPart(body.riskPayloadJws.split(".")[0]))).not.toContain(org.id);
  });

  it("have no aud when the request names no audience", async () => {
    const { key } = await orgWithKey();
    const claims = await claimsOf((await assessOk(key, { mandate: payment() })).riskPayloadJws);
    expect(claims).not.toHaveProperty("aud");
    expect(claims.exp - claims.iat).toBe(300);
  });

  it("give each payload its own jti", async () => {
    const { key } = await orgWithKey();
    const a = await claimsOf((await assessOk(key, { mandate: payment() })).riskPayloadJws);
    const b = await claimsOf((await assessOk(key, { mandate: payment() })).riskPayloadJws);
    expect(a.jti).not.toBe(b.jti);
  });

  it("say livemode false for a test key and true for a live key, for the same mandate", async () => {
    const { org, key: live } = await orgWithKey("live");
    const { key: test } = await org.key(undefined, "test");
    const mandate = payment();
    const fromLive = await claimsOf((await assessOk(live, { mandate })).riskPayloadJws);
    const fromTest = await claimsOf((await assessOk(test, { mandate })).riskPayloadJws);
    expect(fromLive.livemode).toBe(true);
    expect(fromTest.livemode).toBe(false);
    // The same org, so the same public log id.
    expect(fromTest.log_id).toBe(fromLive.log_id);
  });

  it("name another log id for another org", async () => {
    const a = await orgWithKey();
    const b = await orgWithKey();
    const mandate = payment();
    const ca = await claimsOf((await assessOk(a.key, { mandate })).riskPayloadJws);
    const cb = await claimsOf((await assessOk(b.key, { mandate })).riskPayloadJws);
    expect(ca.log_id).toBe(await logIdOf(a.org.id));
    expect(cb.log_id).toBe(await logIdOf(b.org.id));
    expect(ca.log_id).not.toBe(cb.log_id);
  });
});

describe("the validity window (RISK_PAYLOAD_TTL_SECONDS)", () => {
  it("is the configured number of seconds after iat", async () => {
    const { key } = await orgWithKey();
    const res = await assessWith({ RISK_PAYLOAD_TTL_SECONDS: "42" }, key, { mandate: payment() });
    expect(res.status).toBe(200);
    const claims = await claimsOf(res.json.riskPayloadJws);
    expect(claims.exp - claims.iat).toBe(42);
  });

  it.each(["0", "3601", "5m", "-1", "1.5", " 60", "0300"])(
    "%j is a misconfiguration: 503 service_misconfigured, nothing scored or stored",
    async (ttl) => {
      const { org, key } = await orgWithKey();
      const res = await assessWith({ RISK_PAYLOAD_TTL_SECONDS: ttl }, key, { mandate: payment() });
      expect(res.status).toBe(503);
      expect(res.json).toEqual(
        errorBody("service_misconfigured", { setting: "RISK_PAYLOAD_TTL_SECONDS" }),
      );
      expect(await countRows(org.id)).toEqual({
        assessments: 0,
        mandates: 0,
        ledger: 0,
        events: 0,
      });
    },
  );

  it("3600 is the most it may say", async () => {
    const { key } = await orgWithKey();
    const res = await assessWith({ RISK_PAYLOAD_TTL_SECONDS: "3600" }, key, { mandate: payment() });
    expect(res.status).toBe(200);
    const claims = await claimsOf(res.json.riskPayloadJws);
    expect(claims.exp - claims.iat).toBe(3600);
  });

  it("a replay after exp answers the stored JWS unchanged, which no longer verifies downstream", async () => {
    const { org, key } = await orgWithKey();
    const body = { mandate: payment(), audience: PSP };
    const first = await assessWith({ RISK_PAYLOAD_TTL_SECONDS: "1" }, key, body);
    expect(first.status).toBe(200);
    const claims = await claimsOf(first.json.riskPayloadJws);
    expect(claims.exp).toBe(claims.iat + 1);
    // Valid within its second (checked at iat: a loaded machine may pass exp before this line).
    await thirdParty(first.json.riskPayloadJws, {
      issuer: ISSUER,
      audience: PSP,
      currentDate: new Date(claims.iat * 1000),
    });
    // Past exp (whole seconds) before asking again.
    const wait = (claims.exp + 1) * 1000 - Date.now() + 50;
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    const replay = await assess(key, body);
    expect(replay.status).toBe(200);
    expect(replay.json).toEqual(first.json);
    expect(replay.json.riskPayloadJws).toBe(first.json.riskPayloadJws);
    expect(await countRows(org.id)).toMatchObject({ assessments: 1, ledger: 1 });
    await expect(
      thirdParty(replay.json.riskPayloadJws, { issuer: ISSUER, audience: PSP }),
    ).rejects.toBeInstanceOf(errors.JWTExpired);
  });
});

describe("a third party verifying with jose", () => {
  it("accepts the payload for its own audience from the configured issuer", async () => {
    const { key } = await orgWithKey();
    const body = await assessOk(key, { mandate: payment(), audience: PSP });
    const { payload, protectedHeader } = await thirdParty(body.riskPayloadJws, {
      issuer: ISSUER,
      audience: PSP,
    });
    expect(protectedHeader).toMatchObject({ alg: "EdDSA", typ: "risk-payload+jwt" });
    expect(payload.assessment_id).toBe(body.assessmentId);
  });

  it("refuses another audience, another issuer, a payload addressed to no one, and one past exp", async () => {
    const { key } = await orgWithKey();
    const forPsp = (await assessOk(key, { mandate: payment(), audience: PSP })).riskPayloadJws;
    const forNoOne = (await assessOk(key, { mandate: payment() })).riskPayloadJws;
    const refusedClaim = async (verifying: Promise<unknown>) => {
      const error = await verifying.then(
        () => null,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(errors.JWTClaimValidationFailed);
      return (error as InstanceType<typeof errors.JWTClaimValidationFailed>).claim;
    };
    expect(
      await refusedClaim(thirdParty(forPsp, { issuer: ISSUER, audience: "https://other.example" })),
    ).toBe("aud");
    expect(
      await refusedClaim(thirdParty(forPsp, { issuer: "https://risk.test", audience: PSP })),
    ).toBe("iss");
    expect(await refusedClaim(thirdParty(forNoOne, { issuer: ISSUER, audience: PSP }))).toBe("aud");
    const exp = decodeJwsPart(forPsp.split(".")[1] as string).exp as number;
    await expect(
      thirdParty(forPsp, { issuer: ISSUER, audience: PSP, currentDate: new Date(exp * 1000) }),
    ).rejects.toBeInstanceOf(errors.JWTExpired);
  });

  it("the receiver guide's verifier (docs/examples/risk-payload-verify.ts) checks mode, org and mandate too", async () => {
    const { org, key: live } = await orgWithKey("live");
    const { key: test } = await org.key(undefined, "test");
    const mandate = payment({ risk_data: { device: "d-1" } });
    const body = await assessOk(live, { mandate, audience: PSP });
    const keySet = { keys: (await jwks()) as never[] };
    const expected = {
      issuer: ISSUER,
      audience: PSP,
      livemode: true,
      logId: await logIdOf(org.id),
      mandate: body.mandate,
    };
    const claims = await verifyRiskPayload(body.riskPayloadJws, keySet, expected);
    expect(claims.assessment_id).toBe(body.assessmentId);

    const other = await orgWithKey();
    const tampered = { ...body.mandate, payment_amount: { amount: 1, currency: "USD" } };
    const fromTest = await assessOk(test, { mandate, audience: PSP });
    for (const [jws, change, message] of [
      [body.riskPayloadJws, { livemode: false }, "wrong mode"],
      [fromTest.riskPayloadJws, {}, "test-mode"],
      [body.riskPayloadJws, { logId: await logIdOf(other.org.id) }, "another organization"],
      [body.riskPayloadJws, { mandate: tampered }, "another mandate"],
    ] as const) {
      await expect(verifyRiskPayload(jws, keySet, { ...expected, ...change })).rejects.toThrow(
        message,
      );
    }
  });
});

describe("audience", () => {
  it("is part of the idempotency identity: another audience is another assessment, the same one a replay", async () => {
    const { org, key } = await orgWithKey();
    const mandate = payment();
    const none = await assessOk(key, { mandate });
    const a = await assessOk(key, { mandate, audience: PSP });
    const b = await assessOk(key, { mandate, audience: "urn:psp:other" });
    const again = await assessOk(key, { mandate, audience: PSP });
    expect(new Set([none.assessmentId, a.assessmentId, b.assessmentId]).size).toBe(3);
    expect(again).toEqual(a);
    expect((await claimsOf(b.riskPayloadJws)).aud).toBe("urn:psp:other");
    expect(await countRows(org.id)).toMatchObject({ assessments: 3, mandates: 3, ledger: 3 });
  });

  it("another audience under the same idempotency_key is 400 idempotency_key_reused", async () => {
    const { org, key } = await orgWithKey();
    const mandate = payment();
    const idempotency_key = `order-${crypto.randomUUID()}`;
    await assessOk(key, { mandate, audience: PSP, idempotency_key });
    const other = await assess(key, { mandate, audience: "urn:psp:other", idempotency_key });
    expect(other.status).toBe(400);
    expect(other.error.error).toBe("idempotency_key_reused");
    expect(await countRows(org.id)).toMatchObject({ assessments: 1 });
  });

  it.each([["https://psp.example"], ["urn:psp:acme"], ["merchant_123"], ["m".repeat(255)]])(
    "accepts %j",
    async (audience) => {
      const { key } = await orgWithKey();
      const body = await assessOk(key, { mandate: payment(), audience });
      expect((await claimsOf(body.riskPayloadJws)).aud).toBe(audience);
    },
  );

  it.each([
    ["empty", ""],
    ["a space", "psp example"],
    ["a non-ASCII character", "psp-é"],
    ["a control character", "psp\n"],
    ["256 characters", "m".repeat(256)],
    ["a colon without a scheme first", ":psp"],
    ["a scheme that starts with a digit", "1psp:acme"],
    ["a number", 42],
    ["an array", ["https://psp.example"]],
    ["null", null],
  ])("refuses %s: 400 invalid_request at audience, nothing stored", async (_, audience) => {
    const { org, key } = await orgWithKey();
    const res = await assessRaw(key, { mandate: payment(), audience });
    expect(res.status).toBe(400);
    expect(res.error.error).toBe("invalid_request");
    expect([...new Set(res.error.details.map((d: Json) => d.path))]).toEqual(["audience"]);
    expect(await countRows(org.id)).toMatchObject({ assessments: 0 });
  });
});

describe("reads", () => {
  it("GET /v1/assessments/{id} answers the same payload and verify_url as the assessment", async () => {
    const { key } = await orgWithKey();
    const body = await assessOk(key, { mandate: payment(), audience: PSP });
    const read = await call(`/v1/assessments/${body.assessmentId}`, { key });
    expect(read.json.risk_payload).toEqual(body.outcome.risk_payload);
    expect(read.json.risk_payload.verify_url).toBe(`${ISSUER}/.well-known/jwks.json`);
  });
});
