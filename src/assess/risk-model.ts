import type { NormalizedRules } from "./policy";
import type { RuleInput } from "./risk-input";
import {
  type Category,
  type RejectionReason,
  SEVERITIES,
  type Severity,
  type Signal,
} from "./signals";

/**
 * The numbers of the risk model (docs/risk-model.md): every weight and threshold, in one place
 * so the document has one source. What the stages read is in risk-input.ts, what they emit in
 * signals.ts.
 */

/** Everything the stages read: the input and the org's active policy. */
export interface RiskInput extends RuleInput {
  /** The active policy's rules, normalized; null when the org has no active policy. */
  rules: NormalizedRules | null;
  policyVersion: number;
}

export interface Confidences {
  agent_identity: number;
  mandate_validity: number;
  policy_adherence: number;
  behavioral_risk: number;
  recipient_risk: number;
}

/** What one stage found: signals raise the score, rejection reasons deny. */
export interface Findings {
  signals: Signal[];
  rejection_reasons: RejectionReason[];
}

export interface ComponentResult extends Findings {
  confidences: Partial<Confidences>;
}

// --- Numbers ---

/** Points each signal adds to the risk score. */
export const SEVERITY_WEIGHTS: Record<Severity, number> = {
  low: 5,
  medium: 15,
  high: 30,
  critical: 60,
};

/** What each signal takes off the confidence of its dimension. */
export const CONFIDENCE_PENALTIES: Record<Severity, number> = {
  low: 0.1,
  medium: 0.25,
  high: 0.5,
  critical: 1,
};

/** Score bands: below `review` approves, below `deny` reviews, from `deny` up denies. */
export const THRESHOLDS = { review: 40, deny: 70 } as const;

/** How much the identification method alone proves who acts (before identity signals). */
export const IDENTITY_ASSURANCE = { key: 1, card: 0.9, explicit: 0.6, none: 0.5 } as const;

/**
 * How much the form of an AP2 mandate alone proves it (before mandate signals): a verified
 * credential 1; decoded JSON, which anyone could have written, 0.8, so with its `unverified`
 * signal (low, −0.1) its `mandate_validity` is 0.7 at most.
 */
export const MANDATE_ASSURANCE = { credential: 1, decoded: 0.8 } as const;

/** Behaviour: "usual" needs this many approvals; ratios to the median; burst counts per 60 s. */
export const BEHAVIOR_LIMITS = {
  usualMinApproved: 3,
  highRatio: 3,
  criticalRatio: 10,
  burstMedium: 5,
  burstHigh: 10,
} as const;

/**
 * The confidence of the dimension a category lowers (identity → agent_identity, mandate →
 * mandate_validity, policy → policy_adherence, behavior → behavioral_risk, recipient →
 * recipient_risk): `base` minus the penalty of every signal of `category`, in [0, 1], two
 * decimals; 0 outright when a rejection reason of that category stands, since a broken rule
 * leaves no confidence in it.
 */
export function confidenceOf(base: number, category: Category, result: Findings): number {
  if (result.rejection_reasons.some((reason) => reason.category === category)) return 0;
  const penalty = result.signals
    .filter((signal) => signal.category === category)
    .reduce((sum, signal) => sum + CONFIDENCE_PENALTIES[signal.severity], 0);
  return round2(Math.min(1, Math.max(0, base - penalty)));
}

/** Two decimals: the outcome is signed and stored; float noise (0.30000000000000004) must not. */
export function round2(value: number): number {
  return Math.round(value * 100) / 100;
}

/** Severity descending, then category, then type: one order for equal inputs, always. */
export function compareSignals(a: Signal, b: Signal): number {
  return (
    SEVERITIES.indexOf(b.severity) - SEVERITIES.indexOf(a.severity) ||
    compareText(a.category, b.category) ||
    compareText(a.type, b.type)
  );
}

/** Code-unit order, not locale order: `localeCompare` may differ between runtimes. */
export function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
