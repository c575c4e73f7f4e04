import { isPositive } from "../feedback/labels";
import type { Decision, FeedbackLabel } from "../schemas/vocabulary";

/**
 * What a set of decisions did to labeled assessments (docs/feedback.md, Backtests). A decision
 * "flags" an assessment when it is not `approve`: a `review` or a `deny` both stop it until a
 * person acts, as the eval sets' default `review_or_deny` counts them.
 */
export interface LabeledMetrics {
  /** Replayed assessments with an effective label (refund included). */
  labeled: number;
  /** Effective label fraud or chargeback, flagged. */
  fraud_caught: number;
  /** Effective label fraud or chargeback, approved. */
  fraud_missed: number;
  /** Effective label legitimate, flagged. */
  legitimate_blocked: number;
  /** Effective label legitimate, approved. */
  legitimate_approved: number;
  /** caught / (caught + legitimate blocked); null when nothing labeled was flagged. */
  precision: number | null;
  /** caught / (caught + missed); null when nothing is labeled fraud or chargeback. */
  recall: number | null;
  /** Flagged / replayed, over every replayed assessment, labeled or not; null when none. */
  fire_rate: number | null;
}

/** Counts decisions against effective labels; `metrics` is kept current after every `add`. */
export class LabeledTally {
  readonly metrics: LabeledMetrics = {
    labeled: 0,
    fraud_caught: 0,
    fraud_missed: 0,
    legitimate_blocked: 0,
    legitimate_approved: 0,
    precision: null,
    recall: null,
    fire_rate: null,
  };
  #seen = 0;
  #flagged = 0;

  add(decision: Decision, label: FeedbackLabel | null): void {
    const m = this.metrics;
    const flagged = decision !== "approve";
    this.#seen++;
    if (flagged) this.#flagged++;
    if (label !== null) m.labeled++;
    if (isPositive(label)) {
      if (flagged) m.fraud_caught++;
      else m.fraud_missed++;
    } else if (label === "legitimate") {
      if (flagged) m.legitimate_blocked++;
      else m.legitimate_approved++;
    }
    m.precision = ratio(m.fraud_caught, m.fraud_caught + m.legitimate_blocked);
    m.recall = ratio(m.fraud_caught, m.fraud_caught + m.fraud_missed);
    m.fire_rate = ratio(this.#flagged, this.#seen);
  }
}

/** Rounded to 4 decimals, so that the answer is stable across engines. */
function ratio(part: number, whole: number): number | null {
  return whole === 0 ? null : Math.round((part / whole) * 10_000) / 10_000;
}
