import { describe, expect, it } from "vitest";
import {
  HANDBOOK,
  SIMULATION_START_MS,
  scaledOptions,
  simulate,
  type Transactions,
} from "../../scripts/bench/quality/simulator.ts";
import { boostedProbability } from "../../src/model/boosting.ts";
import { FEATURE_NAMES, featureTable } from "../../src/model/features.ts";
import { aucRoc, averagePrecision } from "../../src/model/metrics.ts";
import { trainRiskModel } from "../../src/model/training.ts";
import {
  selectTrainingRows,
  type TrainingEvent,
  type TrainingRequest,
  trainingHistoryStart,
  trainingSet,
} from "../../src/model/training-set.ts";

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const T = Date.UTC(2026, 2, 1);
const week = { labelDelayMs: 7 * DAY, trainingWindowMs: 7 * DAY };

const event = (
  time: number,
  fraudKnownAt: number | null = null,
  more: Partial<TrainingEvent> = {},
): TrainingEvent => ({ time, agent: "a", payee: "p", amount: 10, fraudKnownAt, ...more });

/** A deterministic uniform draw in [0, 1). */
function random(seed: number): () => number {
  let s = seed;
  return () => {
    s = (s * 1_103_515_245 + 12_345) % 2 ** 31;
    return s / 2 ** 31;
  };
}

describe("which payments a risk model trains on", () => {
  // As of T with a week's delay and a week's window: from = T − 14 d, mature before T − 7 d.
  const events = [
    event(T - 20 * DAY), // 0: before the window
    event(T - 10 * DAY), // 1: mature, no label: negative
    event(T - 9 * DAY, T - 2 * DAY), // 2: mature fraud, known: positive
    event(T - 8 * DAY, T + DAY), // 3: mature, its fraud label comes after T: negative
    event(T - 3 * DAY, T - DAY), // 4: recent fraud known early: positive
    event(T - 2 * DAY), // 5: recent, no label yet: left out
    event(T - DAY, null, { labelKnownAt: T - 12 * HOUR }), // 6: recent, known legitimate: negative
    event(T - DAY + HOUR, null, { labelKnownAt: T + HOUR }), // 7: legitimate only after T: left out
    event(T - HOUR, T - HOUR, { labelKnownAt: T - HOUR }), // 8: both labels: the fraud wins
    event(T), // 9: at as-of: not read
    event(T + DAY, T + DAY), // 10: after as-of: not read
  ];

  it("takes known frauds in the window, mature payments without one, and early legitimate labels", () => {
    const set = trainingSet(events, { asOf: T, ...week });
    expect(Array.from(set.rows)).toEqual([1, 2, 3, 4, 6, 8]);
    expect(Array.from(set.y)).toEqual([0, 1, 0, 1, 0, 1]);
    expect(set.mature).toBe(3);
    expect(set.leftOutUnlabeled).toBe(2);
    expect(set.eventsConsidered).toBe(9);
    expect(set.window).toEqual({ from: T - 14 * DAY, to: T });
    expect(set.x.length).toBe(6 * FEATURE_NAMES.length);
  });

  it("leaves a fraud labelled at t + 7 d unlabelled as of t + 6 d, and counts it from t + 7 d", () => {
    const fraud = [event(T, T + 7 * DAY)];
    const before = trainingSet(fraud, { asOf: T + 6 * DAY, ...week });
    expect(before.rows.length).toBe(0);
    expect(before.leftOutUnlabeled).toBe(1);
    const at = trainingSet(fraud, { asOf: T + 7 * DAY, ...week });
    expect(Array.from(at.y)).toEqual([1]);
  });

  it("gives each row the payee's frauds known at the row's own time, not at as-of", () => {
    const history = [
      event(T, T + 7 * DAY),
      event(T + 6 * DAY, null, { agent: "b" }),
      event(T + 7.5 * DAY, null, { agent: "c" }),
    ];
    const set = trainingSet(history, {
      asOf: T + 9 * DAY,
      labelDelayMs: DAY,
      trainingWindowMs: 10 * DAY,
    });
    expect(Array.from(set.y)).toEqual([1, 0, 0]);
    const known = FEATURE_NAMES.indexOf("payee_known_frauds");
    const width = FEATURE_NAMES.length;
    expect([0, 1, 2].map((r) => set.x[r * width + known])).toEqual([0, 0, 1]);
  });

  it("reads nothing at or after as-of", () => {
    const request = { asOf: T, ...week };
    const later = [
      ...events.slice(0, 9),
      event(T, T, { agent: "a", payee: "p" }),
      event(T + HOUR, T + HOUR, { amount: 5000 }),
    ];
    expect(Array.from(trainingSet(later, request).x)).toEqual(
      Array.from(trainingSet(events, request).x),
    );
  });

  it("refuses events out of time order", () => {
    expect(() => trainingSet([event(T - DAY), event(T - 2 * DAY)], { asOf: T, ...week })).toThrow(
      /time order/,
    );
  });
});

/**
 * Two months of 20 payments an hour from 200 agents at 100 payees. About 2 % are frauds, with
 * larger amounts and more of them at payees 0–4; a fraud's label arrives 1 to 10 days later,
 * and 1 % of payments get a legitimate label within a day.
 */
function syntheticHistory(seed: number): TrainingEvent[] {
  const draw = random(seed);
  const out: TrainingEvent[] = [];
  for (let k = 0; k < 60 * 24 * 20; k++) {
    const time = T + k * 3 * 60_000;
    const payee = Math.floor(draw() * 100);
    const fraud = draw() < (payee < 5 ? 0.2 : 0.01);
    const amount = fraud ? 150 + draw() * 450 : 5 + draw() * 200;
    out.push({
      time,
      agent: Math.floor(draw() * 200),
      payee,
      amount: Math.round(amount),
      fraudKnownAt: fraud ? time + (1 + draw() * 9) * DAY : null,
      labelKnownAt: !fraud && draw() < 0.01 ? time + draw() * DAY : null,
    });
  }
  return out;
}

describe("training a risk model", () => {
  const events = syntheticHistory(1);
  const request: TrainingRequest = {
    asOf: T + 40 * DAY,
    labelDelayMs: 7 * DAY,
    trainingWindowMs: 14 * DAY,
    boosting: { trees: 60 },
  };
  const result = trainRiskModel(events, request);
  if (result.status !== "ready") throw new Error(result.reason);
  const set = trainingSet(events, request);

  it("counts what it selected and holds out the latest quarter of the mature rows", () => {
    const positives = set.y.reduce((a, b) => a + b, 0);
    expect(result.counts).toEqual({
      events_considered: 40 * 24 * 20,
      rows: set.rows.length,
      positives,
      negatives: set.rows.length - positives,
      left_out_unlabeled: set.leftOutUnlabeled,
      held_out: {
        rows: set.mature - Math.ceil(set.mature * 0.75),
        positives: set.y
          .subarray(Math.ceil(set.mature * 0.75), set.mature)
          .reduce((a, b) => a + b, 0),
      },
    });
    // The early-labelled rows exist here, and none of them is in the held-out slice.
    expect(set.rows.length).toBeGreaterThan(set.mature);
    expect(result.window).toEqual({ from: T + 19 * DAY, to: T + 40 * DAY });
  });

  it("computes the rows' features as over the whole history, though it reads one horizon back", () => {
    // As of day 55 with a 5-day window, the features' horizon starts on day 6.
    const lateRequest = { ...request, asOf: T + 55 * DAY, trainingWindowMs: 5 * DAY };
    expect(trainingHistoryStart(lateRequest)).toBe(T + 6 * DAY);
    const late = trainingSet(events, lateRequest);
    const whole = featureTable(events, late.rows, { labelDelayMs: request.labelDelayMs });
    expect(late.x).toEqual(whole);
  });

  it("delivers the refit on every selected row", () => {
    const rate = result.counts.positives / result.counts.rows;
    expect(result.model.base).toBeCloseTo(Math.log(rate / (1 - rate)), 12);
    expect(result.model.trees).toHaveLength(60);
  });

  it("ranks the held-out frauds well and reports its importances as shares", () => {
    expect(result.metrics.auc_roc).toBeGreaterThan(0.9);
    expect(result.metrics.average_precision).toBeGreaterThan(0.5);
    expect(result.metrics.brier_score).toBeLessThan(0.03);
    expect(result.features.map((f) => f.name).sort()).toEqual([...FEATURE_NAMES].sort());
    const shares = result.features.map((f) => f.importance);
    expect(shares).toEqual([...shares].sort((a, b) => b - a));
    expect(shares.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 3);
    expect(result.features[0]!.name).toMatch(/amount/);
  });

  it("sets the thresholds at their precision on the held-out slice", () => {
    const { review, deny } = result.metrics.thresholds;
    expect(review.probability).toBeLessThan(1);
    expect(review.precision).toBeGreaterThanOrEqual(0.25);
    expect(review.probability).toBeLessThanOrEqual(deny.probability);
    if (deny.probability < 1) expect(deny.precision).toBeGreaterThanOrEqual(0.9);
    else expect(deny).toEqual({ probability: 1, precision: null, recall: 0, fire_rate: 0 });
    expect(review.recall).toBeGreaterThanOrEqual(deny.recall);
    expect(review.fire_rate).toBeGreaterThan(0);
  });

  it("reports a calibration table over the held-out slice, rounded to 4 decimals", () => {
    const bins = result.metrics.calibration;
    expect(bins.reduce((n, b) => n + b.count, 0)).toBe(result.counts.held_out.rows);
    expect(bins[0]).toMatchObject({ from: 0, to: 0.1 });
    const numbers = [
      result.metrics.auc_roc,
      result.metrics.average_precision,
      result.metrics.card_precision_at_100,
      result.metrics.brier_score,
      ...bins.flatMap((b) => [b.mean_probability, b.fraud_rate]),
      ...result.features.map((f) => f.importance),
    ];
    expect(numbers.filter((v) => Math.round(v * 1e4) / 1e4 !== v)).toEqual([]);
  });

  it("reports the ROC and PR curves and what each threshold would have caught", () => {
    const { roc, pr, caught, thresholds } = result.metrics;
    expect(roc.length).toBeGreaterThan(10);
    expect(roc.length).toBeLessThanOrEqual(100);
    expect(pr.length).toBeLessThanOrEqual(100);
    // Highest threshold first: the curves walk from alerting little to alerting everything.
    expect(roc.at(-1)).toMatchObject({ fpr: 1, tpr: 1 });
    expect(pr.at(-1)?.recall).toBe(1);
    const held = result.counts.held_out;
    expect(caught.slice).toMatchObject({ payments: held.rows, frauds: held.positives });
    expect(caught.slice.amounts).toHaveLength(1);
    expect(caught.slice.amounts[0]?.currency).toBeNull(); // these events carry no currency
    const at = caught.thresholds.map((t) => t.probability);
    expect(at).toEqual([...at].sort((a, b) => a - b));
    expect(at).toContain(0.5);
    expect(at).toContain(thresholds.review.probability);
    // At the review threshold, the alerts are its fire rate of the slice.
    const review = caught.thresholds.find((t) => t.probability === thresholds.review.probability);
    expect(Math.round(((review?.alerts ?? 0) / held.rows) * 1e4) / 1e4).toBe(
      thresholds.review.fire_rate,
    );
  });

  it("fails with the counts when there are too few labelled payments", () => {
    const few = trainRiskModel(events.slice(0, 6 * 24 * 20), {
      ...request,
      asOf: T + 6 * DAY,
      trainingWindowMs: DAY / 2,
    });
    expect(few.status).toBe("failed");
    if (few.status !== "failed") return;
    expect(few.reason).toMatch(/^too few labelled payments to train: \d+ payments with \d+ frauds/);
    expect(few.counts.rows).toBeGreaterThan(0);
  });
});

/** The simulator's transactions as the service's history: a fraud's label known a week later. */
function handbookEvents(tx: Transactions): TrainingEvent[] {
  return Array.from({ length: tx.count }, (_, i) => {
    const time = SIMULATION_START_MS + (tx.seconds[i] as number) * 1000;
    return {
      time,
      agent: tx.customer[i] as number,
      payee: tx.terminal[i] as number,
      amount: tx.amount[i] as number,
      fraudKnownAt: tx.fraud[i] ? time + 7 * DAY : null,
    };
  });
}

describe("a risk model on the Fraud Detection Handbook's simulator", () => {
  it("selects the Handbook's training week as of its test week (its dataset, seed 0)", () => {
    // The notebook's split: the week from 2018-07-25 (day 115), a week's delay, then the test
    // week from day 129; its training set has 67,240 transactions with 598 frauds.
    // All 183 days: a shorter run draws scenario 3's frauds differently.
    const tx = simulate(HANDBOOK);
    const set = selectTrainingRows(handbookEvents(tx), {
      asOf: SIMULATION_START_MS + 129 * DAY,
      ...week,
    });
    expect(set.rows.length).toBe(67_240);
    expect(set.y.reduce((a, b) => a + b, 0)).toBe(598);
    expect(set.mature).toBe(67_240);
  });

  it("trains as of a day and ranks the next week's frauds (reduced scale)", () => {
    const tx = simulate({ ...scaledOptions(3, 1000, 2000), days: 70 });
    const events = handbookEvents(tx);
    const asOf = SIMULATION_START_MS + 56 * DAY;
    const result = trainRiskModel(events, {
      asOf,
      labelDelayMs: 7 * DAY,
      trainingWindowMs: 14 * DAY,
    });
    if (result.status !== "ready") throw new Error(result.reason);
    // Labels come exactly a week late: nothing newer than the delay is labelled.
    expect(result.counts.left_out_unlabeled).toBeGreaterThan(0);
    expect(result.counts.rows).toBe(result.counts.positives + result.counts.negatives);
    expect(result.metrics.auc_roc).toBeGreaterThan(0.8);

    // The delivered model on the week after as-of, each row's features as of its own time.
    const test = Int32Array.from(
      events.flatMap((e, i) => (e.time >= asOf && e.time < asOf + 7 * DAY ? [i] : [])),
    );
    const width = FEATURE_NAMES.length;
    const x = featureTable(events, test, { labelDelayMs: 7 * DAY });
    const scores = Float64Array.from(test, (_, r) =>
      boostedProbability(result.model, x.subarray(r * width, (r + 1) * width)),
    );
    const labels = Uint8Array.from(test, (i) => tx.fraud[i] as number);
    expect(aucRoc(labels, scores)).toBeGreaterThan(0.8);
    expect(averagePrecision(labels, scores)).toBeGreaterThan(0.4);
  });
});
