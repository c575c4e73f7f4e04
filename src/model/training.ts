// Training an org's risk model from its history, with everything the risk_model object shows.
// Pure: the caller (the risk-models API's Queue consumer) reads the history, hands it over and
// stores the result; nothing here touches a database, a clock or the network.
//
// The contract. `trainRiskModel(events, request)`:
// - `events`: the org's history (imported and assessed payments) in time order, each with
//   `fraudKnownAt`, the earliest time a fraud or chargeback label on it was known (null if none),
//   and optionally `labelKnownAt`, the time a label saying it was not a fraud (`legitimate`)
//   was known. A fraud label wins over a legitimate one.
// - `request.asOf`: training happens as of this time (a test clock's or now). Only what was known
//   then exists: events at or after `asOf` are not read at all (not even for features), and a
//   label known after `asOf` is no label.
// - Selection, with `from = asOf − labelDelay − trainingWindow` (the result's `window` is
//   [from, asOf)): positives are the payments in [from, asOf) whose fraud label is known by
//   `asOf`; negatives are the payments in [from, asOf − labelDelay) without one, plus newer ones
//   whose legitimate label is known by `asOf`; the other newer payments are left out (their
//   label may still come).
// - Features: `featureTable` over the events before `asOf`; each row sees only the events before
//   its own time and the labels known by then. The assess path must compute them with the same
//   `labelDelayMs`.
// - Held-out slice: the latest quarter (by time) of the rows older than the label delay. The
//   newer rows are not eligible: they hold only the payments whose label came early (the frauds
//   reported fast, the payments confirmed legitimate), so metrics on them would flatter the model.
//   Boosted trees are trained on the rows before the slice and score it: every metric and
//   threshold is that fit's on rows it never saw and that came after everything it learnt from.
// - The delivered model is a refit with the same options on all selected rows: the newest labels
//   matter most (a payee compromised last week is the fraud of this week), and they are exactly
//   the ones a held-out slice must keep from the measured fit. The refit itself is not measured
//   (no later labelled rows exist as of `asOf`): the metrics are the earlier fit's, and the
//   thresholds too, so they carry an error where the refit's probabilities drift from its.
// - Too little data: fewer than 100 rows or 10 frauds before the slice, or fewer than 5 frauds
//   or 5 legitimate payments in it, is `{status: "failed", reason, counts, window}`, the reason
//   a sentence with the counts.
// - Thresholds: review (precision 0.25 by default) and deny (0.9) are the lowest held-out
//   probability (4 decimals) whose alerts (probability ≥ it) reach that precision on the slice.
//   When none below 1 does, the threshold is 1: the model never fires at that level
//   (`modelScore` in score.ts reads it so), and its precision is null.
// - Reported numbers are rounded to 4 decimals; the model itself is not.

import {
  type BoostedTrees,
  type BoostingOptions,
  boostedProbability,
  trainBoostedTrees,
} from "./boosting";
import { calibrationBins, prCurve, rocCurve, thinCurve } from "./curves";
import { FEATURE_NAMES, featureTable, type HistoryEvent, historyHorizonMs } from "./features";
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

const DAY_MS = 86_400_000;
const HELD_OUT_SHARE = 0.25;
const MIN_TRAINING_ROWS = 100;
const MIN_TRAINING_FRAUDS = 10;
const MIN_HELD_OUT_FRAUDS = 5;
const MIN_HELD_OUT_LEGITIMATE = 5;
/** The most points of each curve the metrics keep (thinned along the curve's length). */
export const CURVE_POINTS = 100;
/**
 * The probabilities "what would have been caught" is reported at, besides the review and deny
 * thresholds: a fixed grid, so two models of an org read side by side.
 */
export const CAUGHT_GRID = [
  0.01, 0.02, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99,
] as const;

/** A payment of the org's history. */
export interface TrainingEvent extends HistoryEvent {
  /** Epoch ms a `legitimate` label was known; it makes a payment newer than the delay a negative. */
  labelKnownAt?: number | null;
  /** ISO 4217 code of `amount`, for the money the metrics report (`caught`); null if unknown. */
  currency?: string | null;
}

export interface TrainingRequest {
  /** Epoch ms: training happens as of this time. */
  asOf: number;
  /** How long a fraud label may take to arrive (the caller's default: 7 days). */
  labelDelayMs: number;
  /** The span of mature payments trained on (the caller's default: 7 days). */
  trainingWindowMs: number;
  /** The review threshold's precision on the held-out slice (default 0.25). */
  reviewPrecision?: number;
  /** The deny threshold's precision on the held-out slice (default 0.9). */
  denyPrecision?: number;
  boosting?: Partial<BoostingOptions>;
}

export interface TrainingCounts {
  /** Events before `asOf`: the history the features read. */
  events_considered: number;
  rows: number;
  positives: number;
  negatives: number;
  /** Payments in the window, newer than the label delay, with no label known yet. */
  left_out_unlabeled: number;
  held_out: { rows: number; positives: number };
}

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

export interface TrainingWindow {
  from: number;
  to: number;
}

export type TrainingResult =
  | {
      status: "ready";
      model: BoostedTrees;
      /** Share of the delivered model's total split gain, largest first (sums to 1). */
      features: { name: string; importance: number }[];
      counts: TrainingCounts;
      window: TrainingWindow;
      metrics: ModelMetrics;
    }
  | { status: "failed"; reason: string; counts: TrainingCounts; window: TrainingWindow };

/** The selected rows, in time order, and what was left out. */
export interface TrainingSelection {
  y: Uint8Array;
  /** The rows' indices in `events`. */
  rows: Int32Array;
  /** Rows [0, mature) are older than the label delay; the rest are early-labelled newer ones. */
  mature: number;
  eventsConsidered: number;
  leftOutUnlabeled: number;
  window: TrainingWindow;
}

/** The selection with its features (row-major, `FEATURE_NAMES` wide). */
export interface TrainingSet extends TrainingSelection {
  x: Float64Array;
}

const round4 = (v: number) => Math.round(v * 1e4) / 1e4;

/**
 * The earliest event time training as of `request.asOf` reads (the window's start less the
 * features' horizon): a caller may load the history from here to `asOf` and no more.
 */
export function trainingHistoryStart(request: TrainingRequest): number {
  const { asOf, labelDelayMs, trainingWindowMs } = request;
  return asOf - labelDelayMs - trainingWindowMs - historyHorizonMs({ labelDelayMs });
}

/** Applies the selection rules (see the header); no features. */
export function selectTrainingRows(
  events: readonly TrainingEvent[],
  request: TrainingRequest,
): TrainingSelection {
  const { asOf, labelDelayMs, trainingWindowMs } = request;
  if (!Number.isFinite(asOf) || !(labelDelayMs >= 0) || !(trainingWindowMs > 0)) {
    throw new RangeError("asOf must be a time, labelDelayMs ≥ 0 and trainingWindowMs > 0");
  }
  const from = asOf - labelDelayMs - trainingWindowMs;
  const matureEnd = asOf - labelDelayMs;
  let end = 0;
  const mature: number[] = [];
  const early: number[] = [];
  let leftOut = 0;
  for (; end < events.length; end++) {
    const e = events[end] as TrainingEvent;
    if (end > 0 && e.time < (events[end - 1] as TrainingEvent).time) {
      throw new RangeError(
        `events must be in time order (event ${end} is earlier than ${end - 1})`,
      );
    }
    if (e.time >= asOf) break;
    if (e.time < from) continue;
    const fraud = e.fraudKnownAt !== null && e.fraudKnownAt <= asOf;
    const legitimate = e.labelKnownAt != null && e.labelKnownAt <= asOf;
    if (e.time < matureEnd) mature.push(end);
    else if (fraud || legitimate) early.push(end);
    else leftOut++;
  }
  const rows = Int32Array.from([...mature, ...early]);
  const y = Uint8Array.from(rows, (i) => {
    const known = (events[i] as TrainingEvent).fraudKnownAt;
    return known !== null && known <= asOf ? 1 : 0;
  });
  return {
    y,
    rows,
    mature: mature.length,
    eventsConsidered: end,
    leftOutUnlabeled: leftOut,
    window: { from, to: asOf },
  };
}

/** The selected rows (`selectTrainingRows`) and their features. */
export function trainingSet(
  events: readonly TrainingEvent[],
  request: TrainingRequest,
): TrainingSet {
  const selection = selectTrainingRows(events, request);
  // Features read one horizon back from the window and no event past its last row, each
  // row's labels as known at its own time; older history is never walked.
  const horizonStart = trainingHistoryStart(request);
  const end = selection.eventsConsidered;
  let start = 0;
  while (start < end && (events[start] as TrainingEvent).time < horizonStart) start++;
  const x = featureTable(
    events.slice(start, end),
    selection.rows.map((i) => i - start),
    { labelDelayMs: request.labelDelayMs },
  );
  return { ...selection, x };
}

/** Trains the org's risk model as of `request.asOf` (see the header for every rule). */
export function trainRiskModel(
  events: readonly TrainingEvent[],
  request: TrainingRequest,
): TrainingResult {
  const reviewPrecision = request.reviewPrecision ?? 0.25;
  const denyPrecision = request.denyPrecision ?? 0.9;
  if (!(reviewPrecision > 0 && reviewPrecision <= denyPrecision && denyPrecision <= 1)) {
    throw new RangeError("precisions must satisfy 0 < reviewPrecision ≤ denyPrecision ≤ 1");
  }
  const set = trainingSet(events, request);
  const width = FEATURE_NAMES.length;
  const n = set.rows.length;
  const cut = heldOutStart(set, events);
  const sum = (from: number, to: number) => {
    let s = 0;
    for (let i = from; i < to; i++) s += set.y[i] as number;
    return s;
  };
  const positives = sum(0, n);
  const trainFrauds = sum(0, cut);
  const heldFrauds = sum(cut, set.mature);
  const heldRows = set.mature - cut;
  const counts: TrainingCounts = {
    events_considered: set.eventsConsidered,
    rows: n,
    positives,
    negatives: n - positives,
    left_out_unlabeled: set.leftOutUnlabeled,
    held_out: { rows: heldRows, positives: heldFrauds },
  };
  if (
    cut < MIN_TRAINING_ROWS ||
    trainFrauds < MIN_TRAINING_FRAUDS ||
    heldFrauds < MIN_HELD_OUT_FRAUDS ||
    heldRows - heldFrauds < MIN_HELD_OUT_LEGITIMATE
  ) {
    return {
      status: "failed",
      reason:
        `too few labelled payments to train: ${cut} payments with ${trainFrauds} frauds before ` +
        `the held-out slice (at least ${MIN_TRAINING_ROWS} and ${MIN_TRAINING_FRAUDS} needed), ` +
        `${heldFrauds} frauds and ${heldRows - heldFrauds} legitimate payments in it (at least ` +
        `${MIN_HELD_OUT_FRAUDS} of each needed); ${set.leftOutUnlabeled} recent payments have no label yet`,
      counts,
      window: set.window,
    };
  }

  const measured = trainBoostedTrees(
    set.x.subarray(0, cut * width),
    set.y.subarray(0, cut),
    width,
    request.boosting,
  );
  const labels = set.y.subarray(cut, set.mature);
  const probabilities = new Float64Array(heldRows);
  for (let r = 0; r < heldRows; r++) {
    const at = (cut + r) * width;
    probabilities[r] = boostedProbability(measured, set.x.subarray(at, at + width));
  }
  const metrics = heldOutMetrics(
    events,
    set.rows.subarray(cut, set.mature),
    labels,
    probabilities,
    reviewPrecision,
    denyPrecision,
  );

  const model = trainBoostedTrees(set.x, set.y, width, request.boosting);
  const gain = model.importance.reduce((a, b) => a + b, 0);
  const features = FEATURE_NAMES.map((name, f) => ({
    name,
    importance: gain > 0 ? round4((model.importance[f] as number) / gain) : 0,
  })).sort((a, b) => b.importance - a.importance);
  return { status: "ready", model, features, counts, window: set.window, metrics };
}

/**
 * Where the held-out slice starts among the mature rows: the latest quarter, moved later past
 * rows at the same instant so that no timestamp is on both sides.
 */
function heldOutStart(set: TrainingSet, events: readonly TrainingEvent[]): number {
  let cut = Math.ceil(set.mature * (1 - HELD_OUT_SHARE));
  const time = (r: number) => (events[set.rows[r] as number] as TrainingEvent).time;
  while (cut > 0 && cut < set.mature && time(cut) === time(cut - 1)) cut++;
  return cut;
}

function heldOutMetrics(
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
