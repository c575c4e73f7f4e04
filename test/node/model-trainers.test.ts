import { describe, expect, it } from "vitest";
import { boostedProbability, trainBoostedTrees } from "../../src/model/boosting.ts";
import { FEATURE_NAMES, featureTable, paymentFeatures } from "../../src/model/features.ts";
import { logisticProbability, trainLogistic } from "../../src/model/logistic.ts";

const DAY = 86_400_000;

describe("boosted trees", () => {
  it("grows the hand-computed stump: leaf value −G/(H+λ) from the base rate", () => {
    // Base rate ½ (log-odds 0): gradients ±½, hessians ¼; the split x ≤ 0 puts G = 1, H = ½
    // on the left, so with λ = 0 and a learning rate of 1 the leaves are −2 and +2.
    const x = Float64Array.from([0, 0, 1, 1]);
    const model = trainBoostedTrees(x, [0, 0, 1, 1], 1, {
      trees: 1,
      learningRate: 1,
      l2: 0,
      minChildWeight: 0,
      minLeafRows: 1,
      maxLeaves: 2,
    });
    expect(model.base).toBe(0);
    expect(model.trees[0]).toEqual({
      feature: [0, -1, -1],
      threshold: [0, 0, 0],
      left: [1, -1, -1],
      right: [2, -1, -1],
      value: [0, -2, 2],
    });
    expect(boostedProbability(model, [0])).toBeCloseTo(1 / (1 + Math.exp(2)), 12);
    expect(boostedProbability(model, [5])).toBeCloseTo(1 / (1 + Math.exp(-2)), 12);
  });

  it("finds a rare class at the end of a long tail", () => {
    const rows = 2000;
    const x = Float64Array.from({ length: rows }, (_, i) => i);
    const y = Array.from({ length: rows }, (_, i) => (i >= rows - 5 ? 1 : 0));
    const model = trainBoostedTrees(x, y, 1, {
      trees: 20,
      learningRate: 0.5,
      minLeafRows: 2,
      minChildWeight: 0.01,
    });
    expect(boostedProbability(model, [rows - 1])).toBeGreaterThan(0.5);
    expect(boostedProbability(model, [rows - 100])).toBeLessThan(0.05);
  });
});

describe("logistic regression", () => {
  // scikit-learn 1.2.1's lbfgs stops ~2e-6 short of the optimum Newton's method reaches.
  it("matches scikit-learn's LogisticRegression(C=1) on standardised inputs", () => {
    const x = Float64Array.from([
      1, 20, 2, 18, 3, 25, 4, 30, 5, 12, 6, 40, 7, 33, 8, 8, 9, 27, 10, 45,
    ]);
    const model = trainLogistic(x, [0, 0, 0, 1, 0, 1, 0, 0, 1, 1], 2);
    expect(model.intercept).toBeCloseTo(-0.5014096512974217, 5);
    expect(model.weights[0]).toBeCloseTo(0.5642997108961425, 5);
    expect(model.weights[1]).toBeCloseTo(1.0244885879636234, 5);
    expect(logisticProbability(model, [1, 20])).toBeCloseTo(0.12804736557917387, 5);
  });
});

describe("payment features", () => {
  const options = { labelDelayMs: 7 * DAY };
  const at = (name: (typeof FEATURE_NAMES)[number]) => FEATURE_NAMES.indexOf(name);

  it("counts a payee's fraud only once its label is known", () => {
    const t0 = Date.UTC(2026, 0, 5, 12);
    const payeePast = [{ time: t0, fraudKnownAt: t0 + 7 * DAY }];
    const before = paymentFeatures(
      { time: t0 + 6 * DAY, amount: 10, payee: "p" },
      [],
      payeePast,
      options,
    );
    const after = paymentFeatures(
      { time: t0 + 8 * DAY, amount: 10, payee: "p" },
      [],
      payeePast,
      options,
    );
    expect(before[at("payee_known_frauds")]).toBe(0);
    expect(before[at("payee_risk_7d")]).toBe(0);
    expect(after[at("payee_known_frauds")]).toBe(1);
    expect(after[at("payee_risk_7d")]).toBe(1);
  });

  it("counts the labelled payments without fraud since the payee's latest known fraud", () => {
    const t0 = Date.UTC(2026, 0, 5, 12);
    const payeePast = [
      { time: t0, fraudKnownAt: t0 + 7 * DAY },
      { time: t0 + DAY, fraudKnownAt: null },
      { time: t0 + 2 * DAY, fraudKnownAt: null },
    ];
    const at9 = paymentFeatures(
      { time: t0 + 9 * DAY, amount: 1, payee: "p" },
      [],
      payeePast,
      options,
    );
    const none = paymentFeatures({ time: t0 + 9 * DAY, amount: 1, payee: "p" }, [], [], options);
    expect(at9[at("payee_clean_since_known_fraud")]).toBe(2);
    expect(none[at("payee_clean_since_known_fraud")]).toBe(-1);
    // The latest run of frauds is the one payment 9 days ago, with no clean payment before it.
    expect(at9[at("payee_fraud_run_days")]).toBe(9);
    expect(at9[at("payee_clean_before_run_days")]).toBe(37);
  });

  it("takes the share of frauds among the payee's labelled payments from its earliest known fraud on", () => {
    const t0 = Date.UTC(2026, 0, 5, 12);
    const fraud = (d: number) => ({ time: t0 + d * DAY, fraudKnownAt: t0 + (d + 7) * DAY });
    const clean = (d: number) => ({ time: t0 + d * DAY, fraudKnownAt: null });
    // Labelled by day 12: clean, fraud, clean, fraud, fraud; the fraud of day 6 is not known yet.
    const payeePast = [clean(0), fraud(1), clean(2), fraud(3), fraud(4), fraud(6)];
    const f = paymentFeatures(
      { time: t0 + 12 * DAY, amount: 1, payee: "p" },
      [],
      payeePast,
      options,
    );
    expect(f[at("payee_fraud_share_since_first")]).toBe(3 / 4);
    const cleanOnly = paymentFeatures(
      { time: t0 + 12 * DAY, amount: 1, payee: "p" },
      [],
      [clean(0), clean(1)],
      options,
    );
    expect(cleanOnly[at("payee_fraud_share_since_first")]).toBe(0);
  });

  it("compares the amount with the agent's own usual and counts the payment in its windows", () => {
    const t0 = Date.UTC(2026, 0, 5, 12);
    const agentPast = [10, 20, 30].map((amount, i) => ({ time: t0 + i * DAY, amount, payee: "a" }));
    const f = paymentFeatures(
      { time: t0 + 3 * DAY, amount: 100, payee: "b" },
      agentPast,
      [],
      options,
    );
    expect(f[at("agent_count_7d")]).toBe(4);
    expect(f[at("agent_mean_amount_7d")]).toBe(40);
    expect(f[at("agent_amount_ratio_30d")]).toBe(5);
    expect(f[at("agent_amount_ratio_median_30d")]).toBe(5);
    expect(f[at("payee_new_for_agent")]).toBe(1);
  });

  it("computes a history's rows from the events before each one", () => {
    const t0 = Date.UTC(2026, 0, 5, 12);
    const events = [0, 1, 2].map((d) => ({
      time: t0 + d * DAY,
      agent: 1,
      payee: 2,
      amount: 10 * (d + 1),
      fraudKnownAt: null,
    }));
    const table = featureTable(events, [2], options);
    const direct = paymentFeatures(events[2]!, events.slice(0, 2), events.slice(0, 2), options);
    expect(Array.from(table)).toEqual(Array.from(direct));
  });
});
