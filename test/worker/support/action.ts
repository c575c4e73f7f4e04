import { env } from "cloudflare:test";
import { calculateJwkThumbprint, importJWK, type JWK, SignJWT } from "jose";
import { expect } from "vitest";
import { call, type RequestBody, type TestOrg } from "./api";
import { newAgent } from "./identity";

/** Helpers of the action-authority suites: mandates, decisions, grants (docs/action-authority.md). */

export type Json = Record<string, any>;

export const inAnHour = () => new Date(Date.now() + 3_600_000).toISOString();

/** A payment mandate for a fresh agent of the org: 3 uses, 5000 USD per use, 10000 in all. */
export async function newMandate(org: TestOrg, body: Json = {}): Promise<Json> {
  const agentId = body.agent_id ?? (await newAgent(org)).id;
  const res = await call("/v1/action-mandates", {
    method: "POST",
    token: org.token,
    body: {
      agent_id: agentId,
      action: "payment.capture",
      resource: "merchant:acme/*",
      expires_at: inAnHour(),
      currency: "USD",
      max_amount_per_use: 5000,
      max_amount_total: 10000,
      max_uses: 3,
      ...body,
    },
  });
  if (res.status !== 201) throw new Error(`mandate creation failed: ${res.status} ${res.text}`);
  return res.json;
}

/** What the tests ask for by default: one capture of 1000 USD at an order of acme. */
export const CAPTURE = {
  action: "payment.capture",
  resource: "merchant:acme/order-1",
  amount: 1000,
  currency: "USD",
};

export function decide(
  key: string,
  mandateId: string,
  body: RequestBody<"/v1/action-mandates/{id}/decisions", "POST">,
) {
  return call(`/v1/action-mandates/${mandateId}/decisions`, { method: "POST", key, body });
}

export function redeem(key: string, body: RequestBody<"/v1/action-grants/redeem", "POST">) {
  return call("/v1/action-grants/redeem", { method: "POST", key, body });
}

/**
 * An org with a mandate, a key that decides and an executor key (the grant's audience), and
 * an ALLOW with a grant for that executor.
 */
export async function allowed(
  org: TestOrg,
  request: RequestBody<"/v1/action-mandates/{id}/decisions", "POST"> = CAPTURE,
  mandate: Json = {},
) {
  const { key } = await org.key(["assess:write", "assess:read"]);
  const executor = await org.key(["assess:write"]);
  const created = await newMandate(org, mandate);
  const res = await decide(key, created.id, { ...request, audience: executor.id });
  expect(res.status).toBe(201);
  expect(res.json.decision).toBe("ALLOW");
  return { key, executor, mandate: created, decision: res.json, grant: res.json.grant!.jws };
}

/**
 * Signs claims with the service's own signing key (the test environment's SIGNING_KEY), as
 * only the service could: to present a grant whose one flaw is the one under test.
 */
export async function signAsService(claims: Json, typ = "action-grant+jwt"): Promise<string> {
  const jwk = JSON.parse(env.SIGNING_KEY as string) as JWK;
  const kid = await calculateJwkThumbprint({ kty: jwk.kty, crv: jwk.crv, x: jwk.x } as JWK);
  return new SignJWT(claims)
    .setProtectedHeader({ alg: "EdDSA", kid, typ })
    .sign(await importJWK(jwk, "EdDSA"));
}
