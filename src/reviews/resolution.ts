import { decodeJwt } from "jose";
import { RISK_PAYLOAD_TYP, riskPayloadTtlSeconds } from "../assess/risk-payload";
import type { Env } from "../env";
import { newId } from "../lib/ids";
import type { REVIEW_DECISIONS, REVIEW_REASONS } from "../schemas/reviews";
import type { RiskPayloadClaims } from "../schemas/risk-payload";
import { signer } from "../signing/signer";

/** Who closed a review: a person (`user`), an API key, or the SLA sweep (`system`). */
export interface Resolver {
  type: string;
  id: string;
}

/** The SLA sweep, as the ledger and the resolved payload name it. */
export const SLA_SWEEP: Resolver = { type: "system", id: "review-sla" };

/**
 * How a review ended: what the ledger entry's terms carry, what the item's row stores, and
 * what a racing resolver finishes writing when it loses (the first resolver's terms).
 */
export interface Resolution {
  review_id: string;
  assessment_id: string;
  decision: (typeof REVIEW_DECISIONS)[number];
  reason: (typeof REVIEW_REASONS)[number];
  note: string | null;
  resolved_at: string;
  resolved_by: Resolver;
  /**
   * When approving re-checked the item's verified credential (`recheck.ts`); absent for a
   * denial, an expiry and an item without a verified credential.
   */
  rechecked_at?: string;
  /** The resolution's own signed Risk Payload. */
  jws: string;
  kid: string;
}

/** Who resolved, in the payload's words: a person, an API key, or the SLA. */
function resolvedByKind(resolver: Resolver): "person" | "api_key" | "sla" {
  if (resolver.type === "user") return "person";
  return resolver.type === "api_key" ? "api_key" : "sla";
}

/**
 * Signs the resolved Risk Payload: the original payload's claims (issuer, audience, mode, log
 * id, assessment, mandate and its hash, score, policy version, agent, credential), a new id and
 * validity window, `decision` set to the human (or expired) decision, and a `resolution` claim
 * naming the review, who resolved it and when, the original automated decision, and when the
 * credential was re-checked. `mandate_verified` stays true only with that re-check: a new
 * signature states nothing about the credential that was not checked when it was made. Same
 * signer and key set as every Risk Payload, so it verifies offline like the first; the first
 * stays as it was.
 */
export async function signResolution(
  env: Env,
  originalJws: string,
  terms: Omit<Resolution, "jws" | "kid">,
): Promise<Pick<Resolution, "jws" | "kid">> {
  const key = await signer(env);
  // Our own payload, read back from our own row: its signature was checked when it was made.
  const {
    iat: _iat,
    exp: _exp,
    jti: _jti,
    // The original's place turns INVALID with this resolution (src/reviews/close.ts): the
    // resolved payload, final, carries none of its own.
    status: _status,
    ...original
  } = decodeJwt(originalJws) as RiskPayloadClaims;
  const now = Math.floor(Date.parse(terms.resolved_at) / 1000);
  const claims: RiskPayloadClaims = {
    ...original,
    iat: now,
    exp: now + riskPayloadTtlSeconds(env),
    jti: newId(),
    decision: terms.decision,
    mandate_verified: original.mandate_verified === true && terms.rechecked_at !== undefined,
    resolution: {
      review_id: terms.review_id,
      status: terms.reason === "review.expired" ? "expired" : "resolved",
      reason: terms.reason,
      resolved_by: resolvedByKind(terms.resolved_by),
      resolver: terms.resolved_by,
      resolved_at: terms.resolved_at,
      // Only a `review` opens an item to resolve.
      original_decision: "review",
      original_jti: _jti ?? null,
      ...(terms.rechecked_at === undefined ? {} : { rechecked_at: terms.rechecked_at }),
    },
  };
  return { jws: await key.signClaims(claims, RISK_PAYLOAD_TYP), kid: key.kid };
}
