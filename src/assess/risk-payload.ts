import { logIdFor } from "#audit/checkpoint";
import { type Env, misconfigured } from "../env";
import type { RiskPayloadClaims } from "../schemas/risk-payload";
import type { ActionKind } from "../schemas/vocabulary";
import type { Outcome } from "./outcome";

/** The JWS `typ` of an assessment's signed Risk Payload. */
export const RISK_PAYLOAD_TYP = "risk-payload+jwt";

/**
 * How long a Risk Payload is valid by default: five minutes, time for the caller to forward the
 * mandate and for the merchant or PSP to check it (a grant lives as long: action/grant.ts), and
 * short enough that a verdict cannot be saved up and spent later.
 */
export const RISK_PAYLOAD_TTL_DEFAULT_SECONDS = 300;
/** The most RISK_PAYLOAD_TTL_SECONDS may say: a verdict is about now, not about hours from now. */
export const RISK_PAYLOAD_TTL_MAX_SECONDS = 3600;

/**
 * RISK_PAYLOAD_TTL_SECONDS (a whole number of seconds, 1 to 3600), or the default when unset.
 * Anything else is a misconfiguration (503), never silently the default or an unbounded payload.
 */
export function riskPayloadTtlSeconds(env: Env): number {
  const raw = env.RISK_PAYLOAD_TTL_SECONDS;
  if (raw === undefined || raw === "") return RISK_PAYLOAD_TTL_DEFAULT_SECONDS;
  const seconds = /^[1-9][0-9]{0,4}$/.test(raw) ? Number(raw) : 0;
  if (seconds < 1 || seconds > RISK_PAYLOAD_TTL_MAX_SECONDS) {
    throw misconfigured("RISK_PAYLOAD_TTL_SECONDS");
  }
  return seconds;
}

/** What a Risk Payload states, besides its bounds. */
export interface RiskPayloadFacts {
  /** The service's public origin (PUBLIC_BASE_URL). */
  issuer: string;
  /** Who will check the payload, as the request named it; null for none. */
  audience: string | null;
  orgId: string;
  livemode: boolean;
  assessmentId: string;
  mandateId: string;
  mandateHash: string;
  kind: ActionKind;
  decision: Outcome["outcome"]["decision"];
  riskScore: number;
  riskLevel: Outcome["outcome"]["risk_level"];
  policyVersion: number;
  agentId: string | null;
  /** The verified credential's leaf reference; null without a credential. */
  credentialReference: string | null;
  /** True only for a mandate taken from a verified AP2 credential. */
  mandateVerified: boolean;
  /** The payload's own id (`jti`). */
  payloadId: string;
  /** Milliseconds since the epoch. */
  issuedAt: number;
  ttlSeconds: number;
}

/**
 * The claims of a Risk Payload (docs/assess.md, "The Risk Payload"). Bound to the service
 * (`iss`), to whoever will rely on it (`aud`, when named), to a time (`iat`, `exp`), to a mode
 * (`livemode`) and to the org, by its public transparency log id (`log_id`): the org id itself
 * is never shown to a third party, and the log id is already public (checkpoints, receipts).
 * Typed by the RiskPayloadClaims schema the OpenAPI document publishes.
 */
export function riskPayloadClaims(facts: RiskPayloadFacts): RiskPayloadClaims {
  const iat = Math.floor(facts.issuedAt / 1000);
  return {
    iss: facts.issuer,
    sub: facts.assessmentId,
    ...(facts.audience === null ? {} : { aud: facts.audience }),
    iat,
    exp: iat + facts.ttlSeconds,
    jti: facts.payloadId,
    livemode: facts.livemode,
    log_id: logIdFor(facts.orgId),
    assessment_id: facts.assessmentId,
    mandate_id: facts.mandateId,
    mandate_hash: facts.mandateHash,
    kind: facts.kind,
    decision: facts.decision,
    risk_score: facts.riskScore,
    risk_level: facts.riskLevel,
    policy_version: facts.policyVersion,
    agent_id: facts.agentId,
    credential_reference: facts.credentialReference,
    mandate_verified: facts.mandateVerified,
  };
}
