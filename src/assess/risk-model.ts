import type { AGENT_STATUSES, CARD_STATUSES, RISK_TIERS } from "../db/schema";
import type { MandateFacts } from "./facts";
import type { NormalizedRules } from "./policy-rules";
import type { ActionKind, MandateType } from "./request";

/**
 * The vocabulary and the numbers of the risk model (docs/risk-model.md): what the stages read,
 * what they emit, and every weight and threshold, in one place so the document has one source.
 */

export const SEVERITIES = ["low", "medium", "high", "critical"] as const;
export type Severity = (typeof SEVERITIES)[number];

export const CATEGORIES = [
  "identity",
  "mandate",
  "policy",
  "behavior",
  "recipient",
  "system",
] as const;
export type Category = (typeof CATEGORIES)[number];

export interface Signal {
  category: Category;
  type: string;
  severity: Severity;
}

export interface RejectionReason {
  key: string;
  category: Category;
  description: string;
}

export interface AgentView {
  id: string;
  status: (typeof AGENT_STATUSES)[number];
  trust_score: number;
  risk_tier: (typeof RISK_TIERS)[number];
  card_status: (typeof CARD_STATUSES)[number];
}

export interface Identity {
  agent: AgentView | null;
  /**
   * How the agent was identified: by the open mandate's cnf key thumbprint, by a verified A2A
   * card reference, or by an explicit agent id in the request.
   */
  method: "key" | "card" | "explicit" | null;
  /**
   * The presented holder key (cnf.jwk) as registered: active, revoked, or not registered at
   * all; null when no key was presented.
   */
  key: "active" | "revoked" | "unregistered" | null;
  /**
   * The A2A agent_card_ref as found: a verified card of the agent, a card that is not (or no
   * longer) verified, or none matching; null when no ref was given.
   */
  card: "verified" | "unverified" | "unknown" | null;
  /** Two pieces of evidence name different agents. */
  conflict: boolean;
}

/** What the route counted in the org's assessment history, before this assessment. */
export interface History {
  /**
   * Assessments by the same agent within the policy's velocity window; null when not counted
   * (no velocity rule, or no agent to count for).
   */
  windowCount: number | null;
  /** Assessments by the agent in the last 60 s. */
  burst: number;
  /** Approved assessments of the agent. */
  approvedCount: number;
  /** Median approved amount of the agent, in this request's currency; null when none. */
  medianApprovedAmount: number | null;
  /** This agent paid this payee before; null when there is no agent or no payee. */
  payeeSeen: boolean | null;
  /** This agent contacted this recipient before (message_send, voice_call); null when unknown. */
  recipientSeen: boolean | null;
}

export interface RiskInput {
  kind: ActionKind;
  mandateType: MandateType | null;
  facts: MandateFacts;
  identity: Identity;
  /** The active policy's rules, normalized; null when the org has no active policy. */
  rules: NormalizedRules | null;
  policyVersion: number;
  history: History;
  /** The assessment's time, epoch milliseconds: the only clock the model reads. */
  now: number;
  /** ISO 3166-1 alpha-2 country the request came from; null when unknown. */
  geo: string | null;
  /**
   * The window aggregates the policy's rule list reads, by canonical key
   * (`<measure>.<per>.<seconds>`, src/rules/attributes.ts); null when not countable (no agent,
   * no payee, no currency). Absent when the policy reads none.
   */
  aggregates?: Record<string, number | null>;
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

/** Kinds whose amount the amount rules and the behaviour model read; others carry none. */
export const AMOUNT_KINDS: readonly ActionKind[] = ["ap2_payment", "custom"];

// --- Catalogs: every signal type and rejection key the model can emit ---

/**
 * Each signal type with its category and the words a `reason` uses for it. Emitting through
 * `signal()` keeps the category of a type fixed and every type documented.
 */
export const SIGNAL_CATALOG = {
  agent_unknown: { category: "identity", text: "the agent could not be identified" },
  agent_suspended: { category: "identity", text: "the agent is suspended" },
  key_revoked: { category: "identity", text: "the presented holder key is revoked" },
  key_unregistered: {
    category: "identity",
    text: "the mandate's holder key is not registered to the agent",
  },
  identity_conflict: { category: "identity", text: "the identity evidence names two agents" },
  card_unverified: { category: "identity", text: "the referenced Agent Card is not verified" },
  card_unknown: { category: "identity", text: "the referenced Agent Card matches no card" },
  agent_card_invalid: { category: "identity", text: "the agent's last Agent Card check failed" },
  payee_unverifiable: {
    category: "mandate",
    text: "the payee may be one of the mandate's undisclosed allowed payees",
  },
  execution_date_far_future: {
    category: "mandate",
    text: "the execution date is more than a year ahead",
  },
  execution_date_unreadable: { category: "mandate", text: "a mandate date could not be read" },
  mandate_issued_in_future: { category: "mandate", text: "the mandate is issued in the future" },
  geo_unknown: { category: "policy", text: "the request's country is unknown" },
  velocity_unknown: { category: "policy", text: "the velocity rule could not be checked" },
  amount_unknown: { category: "policy", text: "the amount rules could not be checked" },
  amount_above_usual: { category: "behavior", text: "the amount is far above the agent's usual" },
  activity_burst: { category: "behavior", text: "the agent is acting in a burst" },
  custom_action: { category: "behavior", text: "the action kind has no specific risk model" },
  payee_first_seen: { category: "recipient", text: "the agent never paid this payee before" },
  recipient_first_contact: {
    category: "recipient",
    text: "the agent never contacted this recipient before",
  },
  recipient_missing: { category: "recipient", text: "the action names no recipient" },
  recipient_not_e164: {
    category: "recipient",
    text: "the call recipient is not an E.164 phone number",
  },
  kya_fault: { category: "system", text: "internal fault in kya" },
  policy_fault: { category: "system", text: "internal fault in policy" },
  risk_fault: { category: "system", text: "internal fault in risk" },
} as const satisfies Record<string, { category: Category; text: string }>;
export type SignalType = keyof typeof SIGNAL_CATALOG;

export function signal(type: SignalType, severity: Severity): Signal {
  return { category: SIGNAL_CATALOG[type].category, type, severity };
}

/** Each rejection key with its category; any one of them denies. */
export const REJECTION_CATALOG = {
  agent_revoked: "identity",
  mandate_expired: "mandate",
  mandate_amount_exceeded: "mandate",
  mandate_amount_below_minimum: "mandate",
  mandate_currency_mismatch: "mandate",
  mandate_outside_execution_window: "mandate",
  payee_not_allowed: "mandate",
  max_amount_exceeded: "policy",
  currency_not_allowed: "policy",
  geo_not_allowed: "policy",
  velocity_exceeded: "policy",
} as const satisfies Record<string, Category>;
export type RejectionKey = keyof typeof REJECTION_CATALOG;

export function rejection(key: RejectionKey, description: string): RejectionReason {
  return { key, category: REJECTION_CATALOG[key], description };
}

/**
 * The rejection of a `deny` rule of the policy's rule list (docs/rules.md). Apart from the
 * catalog, which lists what the model itself finds; the rule list is the org's own judgement.
 */
export function ruleRejection(description: string): RejectionReason {
  return { key: "policy_rule_denied", category: "policy", description };
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
