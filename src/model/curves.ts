// The curves of a fraud probability, for pictures (the console's model page): the ROC and
// precision–recall curves at every distinct score, thinned to at most ~100 points, and the
// calibration (reliability) table. Computed as scikit-learn computes them, like the metrics
// beside them (metrics.ts). Deterministic: the same scores give the same points.

import { cumulativeAlerts } from "./metrics";

/** A point of the ROC curve: alerts are the rows scored ≥ `threshold`. */
export interface RocPoint {
  threshold: number;
  fpr: number;
  tpr: number;
}

/** A point of the precision–recall curve: alerts are the rows scored ≥ `threshold`. */
export interface PrPoint {
  threshold: number;
  precision: number;
  recall: number;
}

/**
 * The ROC curve as `sklearn.metrics.roc_curve(drop_intermediate=False)` without its first
 * point: one point per distinct score, highest first (the curve starts at (0, 0), alerting
 * nothing, which is left implicit). Empty when a class is missing.
 */
export function rocCurve(labels: ArrayLike<number>, scores: ArrayLike<number>): RocPoint[] {
  const { steps, positives } = cumulativeAlerts(labels, scores);
  const negatives = labels.length - positives;
  if (positives === 0 || negatives === 0) return [];
  return steps.map(([threshold, alerts, hits]) => ({
    threshold,
    fpr: (alerts - hits) / negatives,
    tpr: hits / positives,
  }));
}

/**
 * The precision–recall curve as `sklearn.metrics.precision_recall_curve`, highest threshold
 * first, without its closing (recall 0, precision 1) point: one point per distinct score.
 * Empty without a fraud.
 */
export function prCurve(labels: ArrayLike<number>, scores: ArrayLike<number>): PrPoint[] {
  const { steps, positives } = cumulativeAlerts(labels, scores);
  if (positives === 0) return [];
  return steps.map(([threshold, alerts, hits]) => ({
    threshold,
    precision: hits / alerts,
    recall: hits / positives,
  }));
}

/**
 * At most `max` (≥ 2) of `points`, evenly spaced along the curve's length in (x, y): the first
 * and the last always, and between them a point each time the path since the last kept one
 * reaches 1/(max − 2) of the whole. A curve of `max` points or fewer is kept whole.
 */
export function thinCurve<T>(
  points: readonly T[],
  x: (p: T) => number,
  y: (p: T) => number,
  max = 100,
): T[] {
  if (points.length <= max) return [...points];
  const length = (i: number) =>
    Math.hypot(
      x(points[i] as T) - x(points[i - 1] as T),
      y(points[i] as T) - y(points[i - 1] as T),
    );
  let total = 0;
  for (let i = 1; i < points.length; i++) total += length(i);
  const step = total / (max - 2);
  const kept: T[] = [points[0] as T];
  let since = 0;
  for (let i = 1; i < points.length - 1; i++) {
    since += length(i);
    // Each kept point took at least `step` of the path, so at most max − 2 are kept between
    // the two ends (a step of 0, a curve that does not move, keeps none).
    if (step > 0 && since >= step && kept.length < max - 1) {
      kept.push(points[i] as T);
      since = 0;
    }
  }
  kept.push(points[points.length - 1] as T);
  return kept;
}

/** One bin of a calibration (reliability) table. */
export interface CalibrationBin {
  from: number;
  to: number;
  count: number;
  meanProbability: number;
  fraudRate: number;
}

/**
 * A reliability table over `bins` equal-width probability bins, as
 * `sklearn.calibration.calibration_curve(strategy="uniform")` builds it: bin k holds
 * k/bins ≤ p < (k+1)/bins (the last one also p = 1); empty bins are left out. A calibrated
 * model has each bin's fraud rate near its mean probability. Equal width rather than quantiles:
 * with frauds at a percent or so, quantile bins would spend nine of ten on probabilities near 0.
 */
export function calibrationBins(
  labels: ArrayLike<number>,
  probabilities: ArrayLike<number>,
  bins = 10,
): CalibrationBin[] {
  const count = new Array<number>(bins).fill(0);
  const sum = new Array<number>(bins).fill(0);
  const frauds = new Array<number>(bins).fill(0);
  for (let i = 0; i < labels.length; i++) {
    const p = probabilities[i] as number;
    let k = Math.min(bins - 1, Math.max(0, Math.floor(p * bins)));
    // Floating point may put p a hair off its edge: k/bins ≤ p < (k+1)/bins exactly.
    if (k > 0 && p < k / bins) k--;
    else if (k < bins - 1 && p >= (k + 1) / bins) k++;
    count[k] = (count[k] as number) + 1;
    sum[k] = (sum[k] as number) + p;
    if (labels[i]) frauds[k] = (frauds[k] as number) + 1;
  }
  const out: CalibrationBin[] = [];
  for (let k = 0; k < bins; k++) {
    const n = count[k] as number;
    if (n === 0) continue;
    out.push({
      from: k / bins,
      to: (k + 1) / bins,
      count: n,
      meanProbability: (sum[k] as number) / n,
      fraudRate: (frauds[k] as number) / n,
    });
  }
  return out;
}
