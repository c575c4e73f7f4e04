import type { RiskCheckClaims, RiskCheckResult } from "../../schemas/rails";
import type { Decision } from "../../schemas/vocabulary";
import type { RiskTier, VerdictFacts } from "./verdict-facts";

/**
 * x402's `risk-check` result for one assessment (x402-foundation/x402 PR #2422,
 * `specs/extensions/risk-check.md`, "Result Fields" and "JWS Claims"; docs/rails.md).
 */

/** The JWS `typ` of the x402 attestation, as the PR's example header spells it. */
export const RISK_CHECK_TYP = "risk-check+jwt";

/**
 * What an assessment covers in the taxonomy x402 points to (the Composable Trust Evidence
 * Format): who the agent is, and how the payment compares with its history. No sanctions or
 * compliance screening is made, so `compliance_risk` is never claimed.
 */
export const RISK_CHECK_CATEGORIES = ["identity", "behavioral"];

/**
 * The highest x402 score each decision may carry: x402 servers gate on `min_score` alone, so a
 * held or refused payment must never read as safe. A review is at most `high` (59), a deny
 * `critical` (29); an approval (risk_score below 40) is 61 or more.
 */
const SCORE_CAP: Record<Decision, number> = { approve: 100, review: 59, deny: 29 };

/** x402's score (100 = safest) of the service's risk_score (100 = riskiest) and decision. */
export function riskCheckScore(riskScore: number, decision: Decision): number {
  return Math.min(100 - riskScore, SCORE_CAP[decision]);
}

/** x402's tier of its score: low 80–100, medium 60–79, high 30–59, critical 0–29. */
export function riskCheckTier(score: number): RiskTier {
  if (score >= 80) return "low";
  if (score >= 60) return "medium";
  return score >= 30 ? "high" : "critical";
}

/** The service's DID (`did:web`, its port percent-encoded as did:web requires). */
export function serviceDid(publicBaseUrl: string): string {
  return `did:web:${encodeURIComponent(new URL(publicBaseUrl).host)}`;
}

/** The attestation's claims: the verdict as x402 states it, bound like the Risk Payload. */
export function riskCheckClaims(facts: VerdictFacts): RiskCheckClaims {
  const score = riskCheckScore(facts.riskScore, facts.decision);
  return {
    iss: serviceDid(facts.publicBaseUrl),
    sub: facts.assessmentId,
    score,
    tier: riskCheckTier(score),
    iat: facts.iat,
    exp: facts.exp,
    ...(facts.audience === undefined ? {} : { aud: facts.audience }),
    categories: RISK_CHECK_CATEGORIES,
    input_hash: facts.inputHash,
  };
}

/** The `RiskCheckResult` around the signed claims. */
export function riskCheckResult(
  claims: RiskCheckClaims,
  jws: string,
  jwksUrl: string,
): RiskCheckResult {
  return {
    checked: true,
    score: claims.score,
    tier: claims.tier,
    provider: claims.iss,
    categories: claims.categories,
    jws,
    jwks_url: jwksUrl,
    checked_at: new Date(claims.iat * 1000).toISOString(),
    expires_at: new Date(claims.exp * 1000).toISOString(),
  };
}
