import { decodeJwt } from "jose";
import type { Decision, RISK_TIERS } from "../../schemas/vocabulary";
import type { Outcome } from "../outcome";

export type RiskTier = (typeof RISK_TIERS)[number];

/**
 * What every rail's artefact states about one verdict, read from the stored outcome alone
 * (the ADR "one verdict, every rail", point 2): the decision and score, and the Risk Payload's
 * own binding (its times, audience and mandate hash), so an artefact never outlives or
 * outreaches the payload it restates, and a replay restates the same claims.
 */
export interface VerdictFacts {
  assessmentId: string;
  decision: Decision;
  riskScore: number;
  /** The Risk Payload's `iat` and `exp` (epoch seconds). */
  iat: number;
  exp: number;
  /** The Risk Payload's `aud`: who the request said will check it. */
  audience?: string;
  /** The Risk Payload's `mandate_hash` (`sha256:<hex>`): the hash of what was scored. */
  inputHash: string;
  publicBaseUrl: string;
}

/** The facts of a stored outcome; its Risk Payload is the service's own, read without trust. */
export function verdictFacts(outcome: Outcome, publicBaseUrl: string): VerdictFacts {
  const claims = decodeJwt(outcome.risk_payload.jws);
  return {
    assessmentId: outcome.id,
    decision: outcome.outcome.decision,
    riskScore: outcome.outcome.risk_score,
    iat: Number(claims.iat),
    exp: Number(claims.exp),
    ...(typeof claims.aud === "string" ? { audience: claims.aud } : {}),
    inputHash: String(claims.mandate_hash),
    publicBaseUrl,
  };
}
