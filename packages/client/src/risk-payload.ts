import { errors, jwtVerify } from "jose";
import type { components } from "./generated/openapi.js";
import { type KeySource, keyGetter } from "./key-set.js";
import { mandateHash } from "./mandate-hash.js";
import { VerificationError } from "./verification-error.js";

/** The JWS `typ` of a Risk Payload: no other signed object of the service verifies as one. */
export const RISK_PAYLOAD_TYP = "risk-payload+jwt";

/**
 * The claims of a Risk Payload, as the service signs them (docs/assess.md): the document's
 * `RiskPayloadClaims`, generated from the schema the service's builder is typed by. A payload
 * signed by a review's resolution (or its expiry) carries `resolution` (docs/reviews.md).
 */
export type RiskPayloadClaims = components["schemas"]["RiskPayloadClaims"];

export type VerifyRiskPayloadOptions = KeySource & {
  /** The service's origin, e.g. `https://risk.example.com`: required to equal `iss`. */
  issuer?: string;
  /** Your own identifier: required to be the `aud` (a payload without one then fails). */
  audience?: string;
  /** Refuse a payload issued longer ago than this, even if `exp` is later. */
  maxAgeSeconds?: number;
  /** Seconds of clock skew tolerated on `exp`/`iat`. Default 0. */
  clockToleranceSeconds?: number;
  /** "Now", for tests and replays of old decisions. */
  currentDate?: Date;
  /**
   * Accept a test-mode payload (`livemode: false`). Off by default: any org's test key gets a
   * validly signed verdict for whatever audience it names, so only your own test integration
   * should ever accept one.
   */
  allowTestMode?: boolean;
  /** The assessing org's public log id, when you know which org must have assessed it. */
  logId?: string;
  /** The mandate as it was forwarded to you: its digest must be the payload's `mandate_hash`. */
  mandate?: Record<string, unknown>;
};

/**
 * Verifies a Risk Payload offline: an EdDSA signature by a key of the service's set, `typ`
 * `risk-payload+jwt`, and `iss`, `aud`, `exp` (and the age) when asked. Returns the claims;
 * throws VerificationError. Runs on WebCrypto alone: Node 20, Workers and browsers.
 */
export async function verifyRiskPayload(
  jws: string,
  options: VerifyRiskPayloadOptions,
): Promise<RiskPayloadClaims> {
  try {
    const { payload } = await jwtVerify(jws, keyGetter(options), {
      algorithms: ["EdDSA"],
      typ: RISK_PAYLOAD_TYP,
      requiredClaims: ["iss", "sub", "iat", "exp", "jti"],
      ...(options.issuer === undefined ? {} : { issuer: options.issuer }),
      ...(options.audience === undefined ? {} : { audience: options.audience }),
      ...(options.maxAgeSeconds === undefined ? {} : { maxTokenAge: options.maxAgeSeconds }),
      ...(options.currentDate === undefined ? {} : { currentDate: options.currentDate }),
      clockTolerance: options.clockToleranceSeconds ?? 0,
    });
    const claims = payload as unknown as RiskPayloadClaims;
    if (claims.livemode !== true && options.allowTestMode !== true) {
      throw new VerificationError(
        "test_mode",
        "a test-mode Risk Payload (livemode false); pass allowTestMode to accept one",
      );
    }
    if (options.logId !== undefined && claims.log_id !== options.logId) {
      throw new VerificationError("claim_invalid", "assessed by another organization (log_id)");
    }
    if (options.mandate && (await mandateHash(options.mandate)) !== claims.mandate_hash) {
      throw new VerificationError("claim_invalid", "signed for another mandate (mandate_hash)");
    }
    return claims;
  } catch (error) {
    throw asVerificationError(error);
  }
}

/** jose's errors in the package's terms; anything else is rethrown untouched. */
export function asVerificationError(error: unknown): unknown {
  if (error instanceof errors.JWTExpired) return new VerificationError("expired", error.message);
  if (error instanceof errors.JWTClaimValidationFailed)
    return new VerificationError("claim_invalid", error.message);
  if (error instanceof errors.JWSSignatureVerificationFailed)
    return new VerificationError("signature_invalid", error.message);
  if (error instanceof errors.JWKSNoMatchingKey)
    return new VerificationError("signature_invalid", "no key of the set verifies it");
  if (error instanceof errors.JWKSTimeout || error instanceof errors.JWKSInvalid)
    return new VerificationError("key_unavailable", error.message);
  if (error instanceof errors.JOSEError) return new VerificationError("malformed", error.message);
  return error;
}
