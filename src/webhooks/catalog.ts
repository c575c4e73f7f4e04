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
