/**
 * Verifying an agent-risk Risk Payload downstream (docs/assess.md, "Verifying a Risk Payload"),
 * as the merchant or PSP that receives the forwarded mandate does: with the client package
 * (`@agent-risk/client`, packages/client), the service's key set (fetched by you from
 * `<issuer>/.well-known/jwks.json`, cached up to an hour), and what you expect: the service's
 * origin, your own identifier, the mode, and optionally the org and the mandate.
 */
import {
  mandateHash,
  type RiskPayloadClaims,
  verifyRiskPayload as verify,
} from "@agent-risk/client";
import type { JSONWebKeySet } from "jose";

export { mandateHash };

export interface Expected {
  /** The service's public origin, e.g. `https://risk.example.com`: the payload's `iss`. */
  issuer: string;
  /** Your own identifier, as the agent named you in the request's `audience`: the `aud`. */
  audience: string;
  /** A live payment accepts only a live verdict (`livemode: true`); a test system the reverse. */
  livemode: boolean;
  /** The assessing org's public log id, when you know which org must have assessed it. */
  logId?: string;
  /** The mandate as it was forwarded to you: its digest must be the payload's `mandate_hash`. */
  mandate?: Record<string, unknown>;
}

/**
 * The payload's claims when every check passes; throws otherwise. Acting on `decision` is
 * yours: only `approve` is an approval, and a verdict is about one mandate, once (keep `jti`).
 */
export async function verifyRiskPayload(
  jws: string,
  keySet: JSONWebKeySet,
  expected: Expected,
  now: Date = new Date(),
): Promise<RiskPayloadClaims> {
  // Signature (EdDSA), `typ`, `iss`, `aud` (required: a payload addressed to no one is
  // refused), `exp`, and the org and the mandate when given.
  const claims = await verify(jws, {
    jwks: keySet,
    issuer: expected.issuer,
    audience: expected.audience,
    allowTestMode: !expected.livemode,
    ...(expected.logId === undefined ? {} : { logId: expected.logId }),
    ...(expected.mandate === undefined ? {} : { mandate: expected.mandate }),
    currentDate: now,
  });
  // A test system accepts only test verdicts: the client refuses the other way round only.
  if (claims.livemode !== expected.livemode) throw new Error("risk payload: wrong mode");
  return claims;
}
