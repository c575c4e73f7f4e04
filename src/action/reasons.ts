/** Why a decision is a DENY: every reason code a check can give (docs/action-authority.md). */
export const REASON_CODES = [
  "mandate_revoked",
  "mandate_not_yet_valid",
  "mandate_expired",
  "action_mismatch",
  "resource_mismatch",
  "currency_mismatch",
  "amount_required",
  "amount_exceeds_per_use",
  "amount_exceeds_total",
  "uses_exhausted",
  "agent_suspended",
  "agent_revoked",
  "agent_risk_critical",
  "limits_exhausted",
] as const;

export type ReasonCode = (typeof REASON_CODES)[number];

export interface Reason {
  code: ReasonCode;
  message: string;
}
