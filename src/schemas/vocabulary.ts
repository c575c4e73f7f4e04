/**
 * The service's vocabulary, each list written once: the wire's enums, the tables' CHECKs, the
 * rule language and the reports import them from here (issue 38, "One vocabulary"). A leaf:
 * it imports nothing, so any layer may use it.
 */

/** What an assessment answers, in increasing severity. */
export const DECISIONS = ["approve", "review", "deny"] as const;
export type Decision = (typeof DECISIONS)[number];

/** The Risk Payload's `risk_level`, one per decision band (docs/risk-model.md). */
export const RISK_LEVELS = ["normal", "elevated", "highest"] as const;
export type RiskLevel = (typeof RISK_LEVELS)[number];

/** Action authority: a mandate's status and a decision under it. */
export const MANDATE_STATUSES = ["active", "revoked"] as const;
export const ACTION_DECISIONS = ["ALLOW", "DENY"] as const;

/** Agents: their status, the tier of risk their org gave them, their Agent Card's state. */
export const AGENT_STATUSES = ["active", "suspended", "revoked"] as const;
export const RISK_TIERS = ["low", "medium", "high", "critical"] as const;
export const CARD_STATUSES = ["unverified", "verified", "invalid"] as const;

/** What an org learned of an assessment afterwards. */
export const FEEDBACK_LABELS = ["fraud", "dispute", "chargeback", "refund", "legitimate"] as const;
export type FeedbackLabel = (typeof FEEDBACK_LABELS)[number];

/**
 * The labels an imported history record may carry (a subset of the feedback labels: a dispute
 * is not yet an outcome), and the two that make a payment a fraud for the risk model.
 */
export const HISTORY_LABELS = ["fraud", "chargeback", "legitimate", "refund"] as const;
export type HistoryLabel = (typeof HISTORY_LABELS)[number];
export const FRAUD_LABELS = ["fraud", "chargeback"] as const;

/** Where a payment's label came from: an import's record, or the feedback API. */
export const LABEL_SOURCES = ["import", "feedback"] as const;

/**
 * A learned risk model's lifecycle (docs/risk-model.md): training → ready → active / shadow /
 * retired, or failed. At most one active and one shadow per org and mode.
 */
export const RISK_MODEL_STATUSES = [
  "training",
  "ready",
  "active",
  "shadow",
  "retired",
  "failed",
] as const;
export type RiskModelStatus = (typeof RISK_MODEL_STATUSES)[number];

/** The kinds of event in an agent session. */
export const SESSION_EVENT_TYPES = [
  "message",
  "tool_call",
  "tool_result",
  "action",
  "observation",
  "custom",
] as const;

/** Webhook endpoints and deliveries. */
export const ENDPOINT_STATUSES = ["enabled", "disabled"] as const;
export const DELIVERY_STATUSES = ["pending", "succeeded", "failed", "cancelled"] as const;

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

/**
 * Every event type the outbox carries: the spec's table, plus `assessment.resolved` (a review
 * resolved or expired, docs/reviews.md). An endpoint subscribes
 * to some of them, or to all with an empty list; a name not here is refused at subscription.
 */
export const EVENT_TYPES = [
  "assessment.completed",
  "assessment.denied",
  "assessment.flagged",
  "assessment.resolved",
  "agent.trust_changed",
  "agent.suspended",
  "agent.revoked",
  "audit.integrity_alert",
  "key.rotation",
  "spend.review_required",
  "spend.denied",
  "spend.confirmed",
] as const;

export type EventType = (typeof EVENT_TYPES)[number];

/** Why a session chain is broken: the reasons `session_chain_broken` and `/verify` name. */
export const BREAK_REASONS = [
  "sequence_gap",
  "link_mismatch",
  "hash_mismatch",
  "signature_required",
  "signature_malformed",
  "unknown_key",
  "key_not_of_agent",
  "agent_revoked",
  "key_revoked",
  "signature_invalid",
  // Only a re-verification of stored rows finds these.
  "missing_event",
  "key_mismatch",
  "head_mismatch",
  "signed_events_mismatch",
  "missing_batch",
  "ledger_mismatch",
] as const;

export type BreakReason = (typeof BREAK_REASONS)[number];

/** Why an observed effect is not gated (docs/control-coverage.md, "Matching an effect to its gate"). */
export const GAP_CODES = [
  "effect_without_gate",
  "gate_not_found",
  "gate_not_approved",
  "grant_not_redeemed",
  "redeemed_after_expiry",
  "gate_mode_mismatch",
  "effect_before_gate",
  "gate_mismatch",
  "gate_reused",
  "gate_never_redeemed",
] as const;

export type GapCode = (typeof GAP_CODES)[number];

/** What an agent asks to do: an assessment's `kind`. */
export const ACTION_KINDS = ["ap2_payment", "message_send", "voice_call", "custom"] as const;

export type ActionKind = (typeof ACTION_KINDS)[number];

/** The reason an integrity alert names when the ledger found an entry it did not expect. */
export const LEDGER_CONFLICT = "ledger_conflict";

/** What an evaluation counts as flagging an action (the positive class). */
export const EVAL_POSITIVES = ["deny", "review_or_deny"] as const;

/**
 * The periods of a `payment.cumulative` cap (an extension to AP2's open payment mandate): UTC
 * calendar periods (src/ap2-credentials/period-caps.ts).
 */
export const CAP_PERIODS = ["DAILY", "WEEKLY", "MONTHLY", "YEARLY"] as const;
/**
 * The other rails' artefacts a `POST /v1/assess` may ask for (`artifacts`, docs/rails.md):
 * x402's `risk-check` result and ACP's delegate-payment `risk_signals`.
 */
export const ARTIFACT_NAMES = ["x402", "acp"] as const;
export type ArtifactName = (typeof ARTIFACT_NAMES)[number];

/** ACP 2026-04-17 `RiskSignal.type` (schema.delegate_payment.json): one type so far. */
export const ACP_RISK_SIGNAL_TYPES = ["card_testing"] as const;
/** ACP 2026-04-17 `RiskSignal.action`. */
export const ACP_RISK_ACTIONS = ["blocked", "manual_review", "authorized"] as const;
