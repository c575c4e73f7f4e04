import type { AcpRiskSignal } from "../../schemas/rails";
import type { ACP_RISK_ACTIONS, Decision } from "../../schemas/vocabulary";
import type { VerdictFacts } from "./verdict-facts";

/**
 * ACP's delegate-payment `risk_signals` for one assessment (agentic-commerce-protocol
 * `spec/2026-04-17/json-schema/schema.delegate_payment.json`, `$defs.RiskSignal`; docs/rails.md).
 */

/** The JWS `typ` of the signed ACP signals (ACP signs none itself; this is the service's). */
export const ACP_SIGNALS_TYP = "acp-risk-signals+jwt";

/** ACP's `RiskSignal.action` ("Recommended action based on risk assessment") per decision. */
const ACTION: Record<Decision, (typeof ACP_RISK_ACTIONS)[number]> = {
  approve: "authorized",
  review: "manual_review",
  deny: "blocked",
};

/**
 * The signals: ACP 2026-04-17 defines one `type`, `card_testing`, so the verdict is stated
 * once under it, with the service's `risk_score` as its `score` (higher is riskier, as ACP's
 * examples read: 5 `authorized`, 15 `manual_review`). The service's own signals stay in
 * `outcome.signals`; ACP's schema admits no other type.
 */
export function acpRiskSignals(facts: VerdictFacts): AcpRiskSignal[] {
  return [{ type: "card_testing", score: facts.riskScore, action: ACTION[facts.decision] }];
}

/** The claims the service signs over the signals, bound like the Risk Payload. */
export function acpClaims(facts: VerdictFacts, issuer: string, signals: AcpRiskSignal[]) {
  return {
    iss: issuer,
    sub: facts.assessmentId,
    ...(facts.audience === undefined ? {} : { aud: facts.audience }),
    iat: facts.iat,
    exp: facts.exp,
    input_hash: facts.inputHash,
    risk_signals: signals,
  };
}
