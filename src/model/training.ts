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

import { type BoostedTrees, boostedProbability, trainBoostedTrees } from "./boosting";
import { FEATURE_NAMES } from "./features";
import { heldOutMetrics, type ModelMetrics, round4 } from "./held-out-metrics";
import {
  type TrainingEvent,
  type TrainingRequest,
  type TrainingSet,
  type TrainingWindow,
  trainingSet,
} from "./training-set";

const HELD_OUT_SHARE = 0.25;
const MIN_TRAINING_ROWS = 100;
const MIN_TRAINING_FRAUDS = 10;
const MIN_HELD_OUT_FRAUDS = 5;
const MIN_HELD_OUT_LEGITIMATE = 5;

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
