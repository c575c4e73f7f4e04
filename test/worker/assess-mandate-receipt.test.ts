import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { compactVerify, createLocalJWKSet, decodeJwt, type JWK } from "jose";
import { describe, expect, it } from "vitest";
import worker from "../../workers/main";
import { FAILURE_OF_LABEL } from "../support/ap2-vector-labels";
import { BASE, call, type RequestBody } from "./support/api";
import { assess, assessOk, type Json, orgWithKey, payment } from "./support/assess";
import { credentialOrg } from "./support/credentials";
import { errorBody } from "./support/errors";

type Glob = (pattern: string, options: object) => Record<string, unknown>;

// AP2 v0.2's Mandate Receipt (docs/credentials.md, "The Mandate Receipt"): every assessment of a
// credential answers one, signed ES256 by the service's key set, verified here as a client
// would (jose, against /.well-known/jwks.json), over the SDK's own vectors.

const files = (import.meta as unknown as { glob: Glob }).glob(
  "../fixtures/ap2-v0.2-vectors/*.json",
  { eager: true, import: "default" },
) as Record<string, Json>;
const load = (name: string) => files[`../fixtures/ap2-v0.2-vectors/${name}.json`] as Json;

function holderOf(decoded: Json[] | null): JWK | null {
  const delegating = decoded && decoded.length > 1 ? decoded[decoded.length - 2] : null;
  return (delegating?.cnf?.jwk as JWK | undefined) ?? null;
}

function bodyOf(vector: Json): RequestBody<"/v1/assess", "POST"> {
  const checkout = vector.constraint_inputs?.checkout_jwt;
  return {
    credential: vector.credential,
    presentation: {
      aud: vector.expected_aud,
      nonce: vector.expected_nonce,
      ...(checkout ? { checkout_jwt: checkout } : {}),
    },
  };
}

async function orgFor(vector: Json) {
  const anchors = (vector.trusted_keys as { jwk: JWK }[]).map((k) => k.jwk);
  return await credentialOrg(anchors, holderOf(vector.decoded));
}

/** base64url SHA-256 of ASCII text, computed here without the service's code. */
async function sha256(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return btoa(String.fromCharCode(...new Uint8Array(digest)))
    .replaceAll("+", "-")
    .replaceAll("/", "_")
    .replace(/=+$/, "");
}

/** AP2's `reference`: the final SD-JWT of the chain (`<JWS>~<d>~…~`), as `sd_hash` is. */
async function ap2Reference(credential: string): Promise<string> {
  const segments = credential.split("~~");
  return sha256(segments[segments.length - 1] as string);
}

/** The receipt verified as a client would: ES256 only, against the published key set. */
async function verifiedReceipt(jws: string) {
  const { json: keySet } = await call("/.well-known/jwks.json");
  const { payload, protectedHeader } = await compactVerify(jws, createLocalJWKSet(keySet), {
    algorithms: ["ES256"],
  });
  const es256 = keySet.keys.find((k) => k.alg === "ES256");
  expect(protectedHeader).toEqual({
    alg: "ES256",
    kid: es256?.kid,
    typ: "ap2-mandate-receipt+jwt",
  });
  return JSON.parse(new TextDecoder().decode(payload)) as Record<string, unknown>;
}

describe("the AP2 Mandate Receipt of POST /v1/assess", () => {
  it("answers a verified credential with a `success` receipt that verifies against the key set", async () => {
    const vector = load("payment_valid_basic");
    const { key } = await orgFor(vector);
    const body = await assessOk(key, bodyOf(vector));
    expect(body.mandate_receipt).toEqual(expect.any(String));
    expect(body.outcome.mandate_receipt).toBe(body.mandate_receipt);
    const claims = await verifiedReceipt(body.mandate_receipt as string);
    expect(claims).toEqual({
      iss: env.PUBLIC_BASE_URL,
      iat: expect.any(Number),
      result: "success",
      reference: await ap2Reference(vector.credential),
      // The SDK's canonical reference differs from AP2's (the leaf JWS alone): both are carried.
      closed_mandate_reference: vector.closed_mandate_reference,
      assessment_id: body.assessmentId,
      // The verdict's place in the org's status list, the Risk Payload's own: voiding the
      // verdict voids its receipt.
      status: {
        status_list: { idx: expect.any(Number), uri: expect.stringContaining("/v1/status-lists/") },
      },
    });
    expect(claims.status).toEqual(decodeJwt(body.riskPayloadJws as string).status);
    expect(Math.abs((claims.iat as number) - Date.now() / 1000)).toBeLessThan(60);
  });

  it("is the same bytes on a replay and in the stored outcome", async () => {
    const vector = load("payment_valid_three_hop");
    const { key } = await orgFor(vector);
    const first = await assessOk(key, bodyOf(vector));
    const replay = await assessOk(key, bodyOf(vector));
    expect(replay.assessmentId).toBe(first.assessmentId);
    expect(replay.mandate_receipt).toBe(first.mandate_receipt);
    const stored = await call(`/v1/assessments/${first.assessmentId}`, { key });
    expect(stored.status).toBe(200);
    expect(stored.json.mandate_receipt).toBe(first.mandate_receipt);
  });

  it.each([
    ["payment_invalid_tampered_leaf_payload", "invalid_credential"],
    ["payment_invalid_untrusted_root", "invalid_credential"],
    ["payment_invalid_wrong_aud", "invalid_credential"],
    ["payment_invalid_expired_open_mandate", "invalid_credential"],
    ["payment_invalid_amount_exceeds_max", "invalid_mandate"],
    ["checkout_invalid_merchant_not_allowed", "invalid_mandate"],
  ])("answers %s with an `error` receipt, AP2 code %s", async (name, code) => {
    const vector = load(name);
    const { key } = await orgFor(vector);
    const body = await assessOk(key, bodyOf(vector));
    const failure = FAILURE_OF_LABEL[vector.reject_reason ?? ""] ?? "";
    expect(body.outcome.credential?.failure).toBe(failure);
    const claims = await verifiedReceipt(body.mandate_receipt as string);
    expect(claims).toMatchObject({
      iss: env.PUBLIC_BASE_URL,
      result: "error",
      reference: await ap2Reference(vector.credential),
      error: code,
      error_description: expect.stringMatching(new RegExp(`^credential_${failure}: .+`)),
      assessment_id: body.assessmentId,
    });
  });

  it("is null for an assessment without a credential", async () => {
    const { key } = await orgWithKey();
    const body = await assessOk(key, { mandate: payment() });
    expect(body.mandate_receipt).toBeNull();
    expect(body.outcome.mandate_receipt).toBeNull();
  });

  it("answers 503 for a credential when the ES256 key is unusable, never an unsigned receipt", async () => {
    const vector = load("payment_valid_basic");
    const { key } = await orgFor(vector);
    const ctx = createExecutionContext();
    const res = await worker.fetch(
      new Request(`${BASE}/v1/assess`, {
        method: "POST",
        headers: { "x-api-key": key, "content-type": "application/json" },
        body: JSON.stringify(bodyOf(vector)),
      }),
      { ...env, SIGNING_KEY_ES256: "not json" },
      ctx,
    );
    await waitOnExecutionContext(ctx);
    expect(res.status).toBe(503);
    expect(await res.json()).toEqual(errorBody("signing_key_unavailable"));
    // Nothing was stored: the same request with the key answers a fresh assessment.
    const retried = await assess(key, bodyOf(vector));
    expect(retried.status).toBe(200);
  });
});
