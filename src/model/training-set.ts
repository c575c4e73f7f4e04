// The rows an org's model is trained on as of a time, and their features: the selection and
// feature rules of the training contract (training.ts's header: "Selection", "Features").
// Pure: the caller hands over the history in time order.

import type { BoostingOptions } from "./boosting";
import { featureTable, type HistoryEvent, historyHorizonMs } from "./features";

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

export interface TrainingWindow {
  from: number;
  to: number;
}

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

/**
 * The earliest event time training as of `request.asOf` reads (the window's start less the
 * features' horizon): a caller may load the history from here to `asOf` and no more.
 */
export function trainingHistoryStart(request: TrainingRequest): number {
  const { asOf, labelDelayMs, trainingWindowMs } = request;
  return asOf - labelDelayMs - trainingWindowMs - historyHorizonMs({ labelDelayMs });
}

/** Applies the selection rules (training.ts's header); no features. */
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
