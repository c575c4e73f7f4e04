import type { Decision, FeedbackLabel } from "../schemas/vocabulary";

// What a label means (docs/feedback.md): pure functions shared by the feedback routes, trust
// and the backtest's labeled metrics.

/** Confirmed bad outcomes: the positive class of precision and recall. */
export const POSITIVE_LABELS: readonly FeedbackLabel[] = ["fraud", "chargeback"];

/** Awaits a confirmation: never an effective label. */
export const PENDING_LABEL: FeedbackLabel = "dispute";

export function isPositive(label: FeedbackLabel | null): boolean {
  return label !== null && POSITIVE_LABELS.includes(label);
}

export interface TimedLabel {
  id: string;
  label: FeedbackLabel;
  occurredAt: Date;
  createdAt: Date;
}

/** Latest first: by when the outcome happened, then when it was sent, then id (uuidv7). */
function newer(a: TimedLabel, b: TimedLabel): boolean {
  const dt = a.occurredAt.getTime() - b.occurredAt.getTime();
  if (dt !== 0) return dt > 0;
  const dc = a.createdAt.getTime() - b.createdAt.getTime();
  if (dc !== 0) return dc > 0;
  return a.id > b.id;
}

/**
 * An assessment's effective label: its latest label that is not `dispute`, or null. `pending`
 * says a `dispute` is later than it (an outcome is still awaited).
 */
export function effectiveLabel(labels: readonly TimedLabel[]): {
  label: FeedbackLabel | null;
  pending: boolean;
} {
  let latest: TimedLabel | null = null;
  let latestSettled: TimedLabel | null = null;
  for (const l of labels) {
    if (latest === null || newer(l, latest)) latest = l;
    if (l.label !== PENDING_LABEL && (latestSettled === null || newer(l, latestSettled))) {
      latestSettled = l;
    }
  }
  return {
    label: latestSettled?.label ?? null,
    pending: latest !== null && latest.label === PENDING_LABEL,
  };
}

/**
 * How a label moves the assessment's agent's trust: confirmed bad outcomes lower it; a
 * `legitimate` label raises it only on an assessment the rules sent to review (a person's
 * confirmation that the doubt was unfounded). Nothing else moves trust.
 */
export function trustEffect(label: FeedbackLabel, decision: Decision): "lowered" | "raised" | null {
  if (isPositive(label)) return "lowered";
  if (label === "legitimate" && decision === "review") return "raised";
  return null;
}
