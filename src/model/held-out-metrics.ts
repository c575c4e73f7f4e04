// What the risk_model object reports of a fit on the held-out slice it never saw: the ranking
// metrics, the calibration, the review and deny thresholds, the curves and what each threshold
// would have caught (training.ts's header: "Held-out slice", "Thresholds"). Reported numbers are
// rounded to 4 decimals.

import { calibrationBins, prCurve, rocCurve, thinCurve } from "./curves";
import {
  alertsAt,
  aucRoc,
  averagePrecision,
  brierScore,
  type Caught,
  cardPrecisionAtK,
  caughtByThreshold,
  thresholdForPrecision,
} from "./metrics";
import type { TrainingEvent } from "./training-set";

const DAY_MS = 86_400_000;
/** The most points of each curve the metrics keep (thinned along the curve's length). */
export const CURVE_POINTS = 100;
/**
 * The probabilities "what would have been caught" is reported at, besides the review and deny
 * thresholds: a fixed grid, so two models of an org read side by side.
 */
export const CAUGHT_GRID = [
  0.01, 0.02, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99,
] as const;

export interface ThresholdReport {
  /** Alerts are probability ≥ this; 1 means the target precision was never reached. */
  probability: number;
  /** Null when nothing fires. */
  precision: number | null;
  recall: number;
  fire_rate: number;
}

export interface ModelMetrics {
  auc_roc: number;
  average_precision: number;
  /** Per UTC day, the 100 agents with the highest score that day: the share with a fraud that day, averaged. */
  card_precision_at_100: number;
  brier_score: number;
  /** 10 equal-width probability bins; empty bins left out. */
  calibration: {
    from: number;
    to: number;
    count: number;
    mean_probability: number;
    fraud_rate: number;
  }[];
  thresholds: { review: ThresholdReport; deny: ThresholdReport };
  /** The ROC curve at the held-out probabilities (4 decimals), highest first, ≤ CURVE_POINTS. */
  roc: { threshold: number; fpr: number; tpr: number }[];
  /** The precision–recall curve, the same way. */
  pr: { threshold: number; precision: number; recall: number }[];
  /** At CAUGHT_GRID and the review and deny thresholds: frauds caught and good payments stopped. */
  caught: Caught;
}

/** A number as the service reports it: rounded to 4 decimals. */
export const round4 = (v: number) => Math.round(v * 1e4) / 1e4;

/**
 * The metrics of the fit that scored the held-out rows: `rows` are the rows' indices in
 * `events`, `probabilities` the fit's, the thresholds those reaching `reviewPrecision` and
 * `denyPrecision` on them.
 */
export function heldOutMetrics(
  events: readonly TrainingEvent[],
  rows: Int32Array,
  labels: Uint8Array,
  probabilities: Float64Array,
  reviewPrecision: number,
  denyPrecision: number,
): ModelMetrics {
  const cards = Array.from(rows, (i, r) => {
    const e = events[i] as TrainingEvent;
    return {
      day: Math.floor(e.time / DAY_MS),
      card: e.agent,
      fraud: labels[r] as number,
      score: probabilities[r] as number,
    };
  });
  // Thresholds are chosen among the probabilities as the service reports them (4 decimals).
  const shown = probabilities.map(round4);
  const threshold = (precision: number) => {
    const t = thresholdForPrecision(labels, shown, precision);
    if (t === null || t >= 1) return { probability: 1, precision: null, recall: 0, fire_rate: 0 };
    const a = alertsAt(labels, shown, t);
    return {
      probability: t,
      precision: a.precision === null ? null : round4(a.precision),
      recall: round4(a.recall),
      fire_rate: round4(a.fireRate),
    };
  };
  const review = threshold(reviewPrecision);
  const deny = threshold(denyPrecision);
  const grid = [...new Set([...CAUGHT_GRID, review.probability, deny.probability])]
    .filter((t) => t < 1)
    .sort((a, b) => a - b);
  const roc = thinCurve(
    rocCurve(labels, shown),
    (p) => p.fpr,
    (p) => p.tpr,
    CURVE_POINTS,
  ).map((p) => ({ threshold: p.threshold, fpr: round4(p.fpr), tpr: round4(p.tpr) }));
  const pr = thinCurve(
    prCurve(labels, shown),
    (p) => p.recall,
    (p) => p.precision,
    CURVE_POINTS,
  ).map((p) => ({
    threshold: p.threshold,
    precision: round4(p.precision),
    recall: round4(p.recall),
  }));
  const caught = caughtByThreshold(
    labels,
    shown,
    Array.from(rows, (i) => (events[i] as TrainingEvent).amount),
    Array.from(rows, (i) => (events[i] as TrainingEvent).currency ?? null),
    grid,
  );
  return {
    auc_roc: round4(aucRoc(labels, probabilities)),
    average_precision: round4(averagePrecision(labels, probabilities)),
    card_precision_at_100: round4(cardPrecisionAtK(cards, 100)),
    brier_score: round4(brierScore(labels, probabilities)),
    calibration: calibrationBins(labels, probabilities).map((b) => ({
      from: round4(b.from),
      to: round4(b.to),
      count: b.count,
      mean_probability: round4(b.meanProbability),
      fraud_rate: round4(b.fraudRate),
    })),
    thresholds: { review, deny },
    roc,
    pr,
    caught,
  };
}
