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
