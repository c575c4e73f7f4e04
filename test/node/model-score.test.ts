import { describe, expect, it } from "vitest";
import {
  type BoostedTrees,
  boostedContributions,
  boostedLogOdds,
  trainBoostedTrees,
} from "../../src/model/boosting.ts";
import { modelScore, topContributions } from "../../src/model/score.ts";

describe("the risk score of a model probability", () => {
  const t = { review: 0.2, deny: 0.6 };

  it("maps each threshold onto its band's lower edge and the ends onto 0 and 100", () => {
    expect(modelScore(0, t)).toBe(0);
    expect(modelScore(0.1, t)).toBe(20);
    expect(modelScore(0.2, t)).toBe(40);
    expect(modelScore(0.4, t)).toBe(55);
    expect(modelScore(0.6, t)).toBe(70);
    expect(modelScore(0.8, t)).toBe(85);
    expect(modelScore(1, t)).toBe(100);
  });

  it("keeps a probability just under a threshold in the band below", () => {
    expect(modelScore(0.2 - 1e-12, t)).toBe(39);
    expect(modelScore(0.6 - 1e-12, t)).toBe(69);
  });

  it("is an integer, non-decreasing in the probability, for every kind of thresholds", () => {
    for (const th of [
      t,
      { review: 0.2, deny: 0.2 },
      { review: 0.2, deny: 1 },
      { review: 1, deny: 1 },
      { review: 0, deny: 0.5 },
      { review: 0.0003, deny: 0.9999 },
    ]) {
      const scores = Array.from({ length: 10_001 }, (_, k) => modelScore(k / 10_000, th));
      const wrong = scores.filter((s, k) => !Number.isInteger(s) || (k > 0 && s < scores[k - 1]!));
      expect(wrong).toEqual([]);
      expect(Math.min(...scores)).toBeGreaterThanOrEqual(0);
      expect(Math.max(...scores)).toBeLessThanOrEqual(100);
      expect(modelScore(-1, th)).toBe(modelScore(0, th));
      expect(modelScore(2, th)).toBe(modelScore(1, th));
    }
  });

  it("jumps from approve to deny when both thresholds are equal", () => {
    const same = { review: 0.5, deny: 0.5 };
    expect(modelScore(0.5 - 1e-9, same)).toBe(39);
    expect(modelScore(0.5, same)).toBe(70);
  });

  it("never denies when the deny threshold is 1, and never reviews when both are", () => {
    expect(modelScore(1, { review: 0.25, deny: 1 })).toBe(69);
    expect(modelScore(0.625, { review: 0.25, deny: 1 })).toBe(55);
    expect(modelScore(1, { review: 1, deny: 1 })).toBe(39);
    expect(modelScore(0.5, { review: 1, deny: 1 })).toBe(20);
  });

  it("starts in the review band when the review threshold is 0", () => {
    expect(modelScore(0, { review: 0, deny: 0.5 })).toBe(40);
  });

  it("follows other score bands", () => {
    expect(modelScore(0.2, t, { review: 50, deny: 80 })).toBe(50);
    expect(modelScore(0.6, t, { review: 50, deny: 80 })).toBe(80);
  });

  it("refuses a probability that is not a number", () => {
    expect(() => modelScore(Number.NaN, t)).toThrow(RangeError);
  });
});

describe("the features that moved a probability", () => {
  // One hand-built tree: the root (value 0.1) splits on feature 0; its left child (−0.2) splits
  // on feature 1 into leaves −0.5 and 0.3; its right child is a leaf 0.4.
  const model: BoostedTrees = {
    kind: "boosted_trees",
    width: 3,
    base: -2,
    trees: [
      {
        feature: [0, 1, -1, -1, -1],
        threshold: [5, 1, 0, 0, 0],
        left: [1, 3, -1, -1, -1],
        right: [2, 4, -1, -1, -1],
        value: [0.1, -0.2, 0.4, -0.5, 0.3],
      },
    ],
    importance: [1, 1, 0],
  };

  it("credits each split's change of node value to its feature (Saabas)", () => {
    // Path root → left (feature 0: −0.2 − 0.1) → right leaf (feature 1: 0.3 − (−0.2)).
    const { expected, contributions } = boostedContributions(model, [1, 2, 7]);
    expect(expected).toBeCloseTo(-1.9, 14);
    expect(Array.from(contributions).map((c) => Number(c.toFixed(12)))).toEqual([-0.3, 0.5, 0]);
    expect(topContributions(model, [1, 2, 7], 5, ["a", "b", "c"])).toEqual([
      { name: "b", contribution: expect.closeTo(0.5, 12) },
      { name: "a", contribution: expect.closeTo(-0.3, 12) },
    ]);
    expect(topContributions(model, [1, 2, 7], 1, ["a", "b", "c"])).toHaveLength(1);
  });

  it("adds up, with the expected value, to the log-odds of a trained model", () => {
    const rows = 400;
    const x = new Float64Array(rows * 3);
    const y = new Uint8Array(rows);
    let seed = 7;
    const next = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    for (let i = 0; i < rows; i++) {
      for (let f = 0; f < 3; f++) x[i * 3 + f] = next();
      y[i] = (x[i * 3] as number) + 0.5 * (x[i * 3 + 1] as number) + 0.3 * next() > 1 ? 1 : 0;
    }
    const trained = trainBoostedTrees(x, y, 3, { trees: 30, minLeafRows: 5 });
    for (const i of [0, 17, 123, 399]) {
      const row = x.subarray(i * 3, i * 3 + 3);
      const { expected, contributions } = boostedContributions(trained, row);
      const sum = contributions.reduce((a, b) => a + b, 0);
      expect(expected + sum).toBeCloseTo(boostedLogOdds(trained, row), 10);
    }
    // Feature 2 is noise: it moves the score least.
    const mean = (f: number) => {
      let s = 0;
      for (let i = 0; i < rows; i++) {
        s += Math.abs(
          boostedContributions(trained, x.subarray(i * 3, i * 3 + 3)).contributions[f]!,
        );
      }
      return s / rows;
    };
    expect(mean(0)).toBeGreaterThan(mean(2));
    expect(mean(1)).toBeGreaterThan(mean(2));
  });

  it("keeps at a split node the value it would have had as a leaf, −G/(H+λ) · rate", () => {
    // Base rate 2/5. Tree 1 splits x ≤ 0 into leaves −0.8/0.48 and 0.8/0.72 (λ = 0, rate 1);
    // tree 2's root value is then −Σ(p − y)/Σ p(1 − p) over the rows' new probabilities.
    const trained = trainBoostedTrees(Float64Array.from([0, 0, 1, 1, 1]), [0, 0, 0, 1, 1], 1, {
      trees: 2,
      learningRate: 1,
      l2: 0,
      minChildWeight: 0,
      minLeafRows: 1,
      maxLeaves: 2,
    });
    const base = Math.log(2 / 3);
    expect(trained.trees[0]!.value).toEqual([
      0,
      expect.closeTo(-0.8 / 0.48, 12),
      expect.closeTo(0.8 / 0.72, 12),
    ]);
    const pl = 1 / (1 + Math.exp(-(base - 0.8 / 0.48)));
    const pr = 1 / (1 + Math.exp(-(base + 0.8 / 0.72)));
    const g = 2 * pl + 3 * pr - 2;
    const h = 2 * pl * (1 - pl) + 3 * pr * (1 - pr);
    expect(trained.trees[1]!.feature[0]).toBe(0);
    expect(trained.trees[1]!.value[0]).toBeCloseTo(-g / h, 5);
  });
});
