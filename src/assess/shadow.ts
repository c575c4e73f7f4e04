import { logError } from "../lib/log";
import type { NetworkOutcome } from "../schemas/assessments";
import type { ShadowVerdict } from "../schemas/shadow";
import { scoreBehavior } from "./behavior";
import { type AssessContext, riskInput, rulesUnreadable } from "./input";
import { evaluatePolicy } from "./policy-rules";
import type { ParsedAssessRequest } from "./request";
import { attempt, decide, scoreIdentity } from "./risk";
import type { CredentialEvidence } from "./risk-input";
import { THRESHOLDS } from "./risk-model";

/**
 * The shadow policy's would-be verdict (docs/shadow-policies.md): the same stages and the same
 * decision as the active policy's, over the same request and context, with the shadow's rules
 * and what its own windows counted in place of the active policy's. Pure compute: the context
 * read loaded it. Never throws: whatever goes wrong with the shadow is recorded as `review`
 * and never reaches the assessment itself.
 */
export function shadowVerdict(
  request: ParsedAssessRequest,
  context: AssessContext,
  thumbprint: string | null,
  now: number,
  credential: CredentialEvidence | null,
  network: NetworkOutcome | null = null,
): ShadowVerdict | null {
  const shadow = context.shadow;
  if (!shadow) return null;
  const recorded = { policy_id: shadow.id, version: shadow.version };
  try {
    const view = shadowView(context, shadow);
    const input = riskInput(request, view, thumbprint, now, credential, network);
    const decision = decide(
      {
        kya: attempt(() => scoreIdentity(input)),
        // As for the active policy: rules that no longer parse fail the policy stage.
        policy: rulesUnreadable(view)
          ? new Error("shadow policy rules are unreadable")
          : attempt(() => evaluatePolicy(input)),
        risk: attempt(() => scoreBehavior(input)),
      },
      input,
    );
    return {
      ...recorded,
      decision: decision.decision,
      risk_score: decision.risk_score,
      reason: decision.reason,
      rule: decision.rule?.id ?? null,
    };
  } catch (error) {
    logError("shadow policy evaluation failed", { policy: shadow.id, error: String(error) });
    return {
      ...recorded,
      decision: "review",
      risk_score: THRESHOLDS.review,
      reason: "Review: the shadow policy could not be evaluated.",
      rule: null,
    };
  }
}

/** The context as the shadow policy would have read it, had it been the active one. */
function shadowView(
  context: AssessContext,
  shadow: NonNullable<AssessContext["shadow"]>,
): AssessContext {
  return {
    ...context,
    // A draft never activated has no version; its id names its rules, which never change.
    policy: { id: shadow.id, version: shadow.version ?? 0, rules: shadow.rules },
    history: context.history && { ...context.history, window_count: shadow.window_count },
    aggregates: shadow.aggregates,
    shadow: null,
  };
}
