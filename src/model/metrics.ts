// How well a fraud probability ranks: the three metrics of the Fraud Detection Handbook
// (Le Borgne et al., chapter 4), computed as scikit-learn and the Handbook compute them, so a
// model's card and the benchmark speak the same numbers. Pure, in-memory, O(n log n).

/** Row indices sorted by score, highest first (ties in row order, which the metrics ignore). */
function byScoreDescending(scores: ArrayLike<number>): Int32Array {
  const order = Int32Array.from({ length: scores.length }, (_, i) => i);
  order.sort((a, b) => (scores[b] as number) - (scores[a] as number) || a - b);
  return order;
}

/**
 * Area under the ROC curve, as `sklearn.metrics.roc_auc_score`: the trapezoid over distinct
 * thresholds, so tied scores count half. NaN when only one class is present.
 */
export function aucRoc(labels: ArrayLike<number>, scores: ArrayLike<number>): number {
  const order = byScoreDescending(scores);
  let positives = 0;
  for (let i = 0; i < labels.length; i++) positives += labels[i] ? 1 : 0;
  const negatives = labels.length - positives;
  if (positives === 0 || negatives === 0) return Number.NaN;
  let tp = 0;
  let fp = 0;
  let area = 0;
  for (let k = 0; k < order.length; ) {
    const score = scores[order[k] as number];
    const fpBefore = fp;
    const tpBefore = tp;
    while (k < order.length && scores[order[k] as number] === score) {
      if (labels[order[k] as number]) tp++;
      else fp++;
      k++;
    }
    area += ((fp - fpBefore) * (tp + tpBefore)) / 2;
  }
  return area / (positives * negatives);
}

/**
 * Average precision, as `sklearn.metrics.average_precision_score`: Σ (Rₙ − Rₙ₋₁)·Pₙ over
 * distinct thresholds (no interpolation). NaN without a positive.
 */
export function averagePrecision(labels: ArrayLike<number>, scores: ArrayLike<number>): number {
  const order = byScoreDescending(scores);
  let positives = 0;
  for (let i = 0; i < labels.length; i++) positives += labels[i] ? 1 : 0;
  if (positives === 0) return Number.NaN;
  let tp = 0;
  let seen = 0;
  let sum = 0;
  for (let k = 0; k < order.length; ) {
    const score = scores[order[k] as number];
    const tpBefore = tp;
    while (k < order.length && scores[order[k] as number] === score) {
      if (labels[order[k] as number]) tp++;
      seen++;
      k++;
    }
    sum += (tp - tpBefore) * (tp / seen);
  }
  return sum / positives;
}

/** One scored transaction for the card-precision metric. */
export interface CardScore {
  /** Day index (the Handbook's TX_TIME_DAYS): the metric is computed per day. */
  day: number;
  /** The card, customer or agent the transaction belongs to. */
  card: number | string;
  fraud: boolean | number;
  score: number;
}

/**
 * Card precision@k as the Handbook defines it (`card_precision_top_k`): each day, every card
 * gets the highest score and the worst label of its transactions; the day's precision is the
 * share of compromised cards among the k highest-scored cards; cards found compromised on an
 * earlier day are left out of later days; the result is the mean over days. Tied cards are
 * taken in ascending card order (pandas' unstable sort may take them in another).
 */
export function cardPrecisionAtK(rows: readonly CardScore[], k = 100): number {
  const days = [...new Set(rows.map((r) => r.day))].sort((a, b) => a - b);
  const byDay = new Map<number, CardScore[]>();
  for (const r of rows) {
    const list = byDay.get(r.day);
    if (list) list.push(r);
    else byDay.set(r.day, [r]);
  }
  const detected = new Set<number | string>();
  let total = 0;
  for (const day of days) {
    const cards = new Map<number | string, { score: number; fraud: boolean }>();
    for (const r of byDay.get(day) ?? []) {
      if (detected.has(r.card)) continue;
      const c = cards.get(r.card);
      const fraud = Boolean(r.fraud);
      if (c) {
        c.score = Math.max(c.score, r.score);
        c.fraud ||= fraud;
      } else cards.set(r.card, { score: r.score, fraud });
    }
    const ranked = [...cards].sort(
      ([a, x], [b, y]) => y.score - x.score || (a < b ? -1 : a > b ? 1 : 0),
    );
    let hits = 0;
    for (const [card, c] of ranked.slice(0, k)) {
      if (c.fraud) {
        hits++;
        detected.add(card);
      }
    }
    total += hits / k;
  }
  return days.length === 0 ? Number.NaN : total / days.length;
}

/** Brier score: the mean squared gap between probability and outcome (0 is perfect). NaN when empty. */
export function brierScore(labels: ArrayLike<number>, probabilities: ArrayLike<number>): number {
  let sum = 0;
  for (let i = 0; i < labels.length; i++) {
    const gap = (probabilities[i] as number) - (labels[i] ? 1 : 0);
    sum += gap * gap;
  }
  return labels.length === 0 ? Number.NaN : sum / labels.length;
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

/** What an alert threshold does on labelled rows: alerts are the rows scored ≥ it. */
export interface AlertStats {
  alerts: number;
  /** Frauds among the alerts; null when nothing fires. */
  precision: number | null;
  /** Share of the frauds that alert (0 without a fraud). */
  recall: number;
  /** Share of all rows that alert. */
  fireRate: number;
}

export function alertsAt(
  labels: ArrayLike<number>,
  scores: ArrayLike<number>,
  threshold: number,
): AlertStats {
  let alerts = 0;
  let hits = 0;
  let positives = 0;
  for (let i = 0; i < labels.length; i++) {
    const fraud = labels[i] ? 1 : 0;
    positives += fraud;
    if ((scores[i] as number) >= threshold) {
      alerts++;
      hits += fraud;
    }
  }
  return {
    alerts,
    precision: alerts ? hits / alerts : null,
    recall: positives ? hits / positives : 0,
    fireRate: labels.length ? alerts / labels.length : 0,
  };
}

/**
 * The lowest score t among `scores` whose alerts (score ≥ t) reach `precision`, or null when
 * no threshold does. Precision is not monotone in t, so every distinct score is tried and the
 * lowest that qualifies wins: it alerts the most while still meeting the target.
 */
export function thresholdForPrecision(
  labels: ArrayLike<number>,
  scores: ArrayLike<number>,
  precision: number,
): number | null {
  const order = byScoreDescending(scores);
  let hits = 0;
  let seen = 0;
  let found: number | null = null;
  for (let k = 0; k < order.length; ) {
    const score = scores[order[k] as number] as number;
    while (k < order.length && scores[order[k] as number] === score) {
      if (labels[order[k] as number]) hits++;
      seen++;
      k++;
    }
    if (hits / seen >= precision) found = score;
  }
  return found;
}
