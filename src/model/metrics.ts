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
 * The alerts at each distinct score, highest first: `[threshold, alerts, hits]` with alerts
 * the rows scored ≥ threshold and hits the frauds among them, and the number of frauds.
 */
export function cumulativeAlerts(
  labels: ArrayLike<number>,
  scores: ArrayLike<number>,
): { steps: [number, number, number][]; positives: number } {
  const order = byScoreDescending(scores);
  const steps: [number, number, number][] = [];
  let hits = 0;
  let seen = 0;
  for (let k = 0; k < order.length; ) {
    const score = scores[order[k] as number] as number;
    while (k < order.length && scores[order[k] as number] === score) {
      if (labels[order[k] as number]) hits++;
      seen++;
      k++;
    }
    steps.push([score, seen, hits]);
  }
  return { steps, positives: hits };
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
  let found: number | null = null;
  for (const [score, alerts, hits] of cumulativeAlerts(labels, scores).steps) {
    if (hits / alerts >= precision) found = score;
  }
  return found;
}

// What each threshold of a fixed grid would have caught in money (the console's model page).

/** The money of a set of payments in one currency (minor units). */
export interface CaughtAmount {
  /** ISO 4217 code; null for payments whose currency is unknown. */
  currency: string | null;
  /** Fraud amount (caught, or in the slice). */
  fraud: number;
  /** Amount of good payments (stopped, or in the slice). */
  good: number;
}

export interface CaughtAtThreshold {
  /** Alerts are the rows scored ≥ this. */
  probability: number;
  alerts: number;
  /** Frauds among the alerts: caught. */
  frauds: number;
  /** Good payments among the alerts: stopped (sent to review or denied). */
  goods: number;
  amounts: CaughtAmount[];
}

export interface Caught {
  /** The whole slice: what there was to catch, and the good payments that could be stopped. */
  slice: { payments: number; frauds: number; amounts: CaughtAmount[] };
  thresholds: CaughtAtThreshold[];
}

/**
 * What each threshold would have caught on labelled rows with amounts: the frauds (and their
 * amount) among the alerts, and the good payments (and theirs) the alerts would have stopped,
 * per currency. Currencies are those of the most payments (then by code), at most
 * `maxCurrencies`: amounts in different currencies are never added together.
 */
export function caughtByThreshold(
  labels: ArrayLike<number>,
  scores: ArrayLike<number>,
  amounts: ArrayLike<number>,
  currencies: readonly (string | null)[],
  thresholds: readonly number[],
  maxCurrencies = 10,
): Caught {
  const perCurrency = new Map<string | null, number>();
  for (const currency of currencies)
    perCurrency.set(currency, (perCurrency.get(currency) ?? 0) + 1);
  const shown = [...perCurrency]
    .sort(([a, x], [b, y]) => y - x || ((a ?? "") < (b ?? "") ? -1 : (a ?? "") > (b ?? "") ? 1 : 0))
    .slice(0, maxCurrencies)
    .map(([currency]) => currency)
    .sort((a, b) => ((a ?? "") < (b ?? "") ? -1 : (a ?? "") > (b ?? "") ? 1 : 0));
  const column = new Map(shown.map((currency, k) => [currency, k]));
  const tally = (threshold: number) => {
    const fraud = new Array<number>(shown.length).fill(0);
    const good = new Array<number>(shown.length).fill(0);
    let alerts = 0;
    let frauds = 0;
    for (let i = 0; i < labels.length; i++) {
      if ((scores[i] as number) < threshold) continue;
      alerts++;
      const isFraud = Boolean(labels[i]);
      if (isFraud) frauds++;
      const k = column.get(currencies[i] ?? null);
      if (k === undefined) continue;
      if (isFraud) fraud[k] = (fraud[k] as number) + (amounts[i] as number);
      else good[k] = (good[k] as number) + (amounts[i] as number);
    }
    return {
      alerts,
      frauds,
      goods: alerts - frauds,
      amounts: shown.map((currency, k) => ({
        currency,
        fraud: fraud[k] as number,
        good: good[k] as number,
      })),
    };
  };
  const all = tally(Number.NEGATIVE_INFINITY);
  return {
    slice: { payments: all.alerts, frauds: all.frauds, amounts: all.amounts },
    thresholds: thresholds.map((probability) => ({ probability, ...tally(probability) })),
  };
}
