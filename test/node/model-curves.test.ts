import { describe, expect, it } from "vitest";
import { calibrationBins, prCurve, rocCurve, thinCurve } from "../../src/model/curves.ts";
import { aucRoc, averagePrecision } from "../../src/model/metrics.ts";

/** A curve of `{x, y}` points thinned along x and y. */
const thinXY = <T extends { x: number; y: number }>(points: T[], max: number) =>
  thinCurve(
    points,
    (p) => p.x,
    (p) => p.y,
    max,
  );

describe("the calibration table", () => {
  // By probability: 0.05 (0), 0.3 (0) and 0.3 (1), 0.35 (0), 0.7 (1), 0.8 (0), 0.9 (1), 1 (0).
  const y = [1, 0, 1, 0, 0, 1, 0, 0];
  const p = [0.9, 0.8, 0.7, 0.35, 0.3, 0.3, 0.05, 1];

  it("bins probabilities in tenths, an edge going up and 1 into the last bin, empty bins left out", () => {
    const bins = calibrationBins(y, p);
    expect(bins.map((b) => [b.from, b.to, b.count])).toEqual([
      [0, 0.1, 1],
      [0.3, 0.4, 3],
      [0.7, 0.8, 1],
      [0.8, 0.9, 1],
      [0.9, 1, 2],
    ]);
    expect(bins[1]!.meanProbability).toBeCloseTo(0.95 / 3, 14);
    expect(bins[1]!.fraudRate).toBeCloseTo(1 / 3, 14);
    expect(bins[4]!.meanProbability).toBeCloseTo(0.95, 14);
    expect(bins[4]!.fraudRate).toBe(0.5);
  });
});

describe("the ROC and precision–recall curves", () => {
  // By hand: thresholds 0.9 (1 alert, 1 fraud), 0.8 (3, 2), 0.3 (4, 2), 0.1 (5, 2); 2 frauds,
  // 3 good payments.
  const small = { labels: [1, 0, 1, 0, 0], scores: [0.9, 0.8, 0.8, 0.3, 0.1] };
  // Ties on purpose (0.1, 0.3, 0.8), as in model-metrics.test.ts.
  const labels = [0, 1, 0, 0, 1, 1, 0, 0, 0, 1, 0, 0, 1, 0, 0, 0];
  const scores = [0.1, 0.8, 0.3, 0.3, 0.35, 0.9, 0.05, 0.8, 0.2, 0.3, 0.6, 0.1, 0.7, 0.4, 0.1, 0];

  it("draws the ROC curve at each distinct score, highest first", () => {
    expect(rocCurve(small.labels, small.scores)).toEqual([
      { threshold: 0.9, fpr: 0, tpr: 0.5 },
      { threshold: 0.8, fpr: 1 / 3, tpr: 1 },
      { threshold: 0.3, fpr: 2 / 3, tpr: 1 },
      { threshold: 0.1, fpr: 1, tpr: 1 },
    ]);
    expect(rocCurve([0, 0], [0.1, 0.2])).toEqual([]);
  });

  it("draws the precision–recall curve at each distinct score, highest first", () => {
    expect(prCurve(small.labels, small.scores)).toEqual([
      { threshold: 0.9, precision: 1, recall: 0.5 },
      { threshold: 0.8, precision: 2 / 3, recall: 1 },
      { threshold: 0.3, precision: 0.5, recall: 1 },
      { threshold: 0.1, precision: 0.4, recall: 1 },
    ]);
    expect(prCurve([0, 0], [0.1, 0.2])).toEqual([]);
  });

  it("has the AUC ROC under its ROC curve and the average precision in its PR steps", () => {
    // From (0, 0), the trapezoids; the PR curve's Σ (Rₙ − Rₙ₋₁)·Pₙ.
    const roc = rocCurve(labels, scores);
    let area = 0;
    let previous = { fpr: 0, tpr: 0 };
    for (const p of roc) {
      area += ((p.fpr - previous.fpr) * (p.tpr + previous.tpr)) / 2;
      previous = p;
    }
    expect(area).toBeCloseTo(aucRoc(labels, scores), 14);
    let ap = 0;
    let recall = 0;
    for (const p of prCurve(labels, scores)) {
      ap += (p.recall - recall) * p.precision;
      recall = p.recall;
    }
    expect(ap).toBeCloseTo(averagePrecision(labels, scores), 14);
  });

  it("thins a long curve evenly along its length, keeping both ends", () => {
    const line = Array.from({ length: 201 }, (_, i) => ({ x: i, y: 0 }));
    // 200 long, at most 10 points: a step of 200 / 8 = 25.
    expect(thinXY(line, 10).map((p) => p.x)).toEqual([0, 25, 50, 75, 100, 125, 150, 175, 200]);
    const short = line.slice(0, 5);
    expect(thinXY(short, 10)).toEqual(short);
    // A ragged curve: never more than the limit, the same points every time.
    const ragged = Array.from({ length: 5_000 }, (_, i) => ({ x: i / 5_000, y: (i * 7919) % 13 }));
    const thin = thinXY(ragged, 100);
    expect(thin.length).toBeLessThanOrEqual(100);
    expect(thin.length).toBeGreaterThan(90);
    expect(thin[0]).toBe(ragged[0]);
    expect(thin.at(-1)).toBe(ragged.at(-1));
    expect(thinXY(ragged, 100)).toEqual(thin);
  });
});
