import { describe, expect, it } from "vitest";
import {
  alertsAt,
  aucRoc,
  averagePrecision,
  brierScore,
  cardPrecisionAtK,
  caughtByThreshold,
  thresholdForPrecision,
} from "../../src/model/metrics.ts";

// Ties on purpose (0.1, 0.3, 0.8): expected values from scikit-learn 1.2.1 and the Handbook's
// own `card_precision_top_k` (shared_functions.py) run on the same input.
const labels = [0, 1, 0, 0, 1, 1, 0, 0, 0, 1, 0, 0, 1, 0, 0, 0];
const scores = [0.1, 0.8, 0.3, 0.3, 0.35, 0.9, 0.05, 0.8, 0.2, 0.3, 0.6, 0.1, 0.7, 0.4, 0.1, 0];
const days = [0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2];
const cards = [1, 2, 3, 1, 4, 1, 2, 5, 3, 4, 2, 6, 7, 3, 5, 1];
const rows = labels.map((fraud, i) => ({
  day: days[i]!,
  card: cards[i]!,
  fraud,
  score: scores[i]!,
}));

describe("model metrics", () => {
  it("computes the AUC ROC as roc_auc_score, ties counting half", () => {
    expect(aucRoc(labels, scores)).toBeCloseTo(0.8454545454545455, 14);
  });

  it("computes the average precision as average_precision_score", () => {
    expect(averagePrecision(labels, scores)).toBeCloseTo(0.6976190476190476, 14);
  });

  it("computes the Handbook's card precision@k, dropping cards already detected", () => {
    expect(cardPrecisionAtK(rows, 2)).toBeCloseTo(0.6666666666666666, 14);
    expect(cardPrecisionAtK(rows, 3)).toBeCloseTo(0.4444444444444444, 14);
  });

  it("answers NaN when a class is missing", () => {
    expect(aucRoc([0, 0], [0.1, 0.2])).toBeNaN();
    expect(averagePrecision([0, 0], [0.1, 0.2])).toBeNaN();
  });
});

describe("the Brier score and threshold metrics", () => {
  // By score: 1.0 (0), 0.9 (1), 0.8 (0), 0.7 (1), 0.35 (0), 0.3 (0) and 0.3 (1) tied, 0.05 (0).
  // Precision of the alerts at each threshold: 0, 1/2, 1/3, 2/4, 2/5, 3/7, 3/8.
  const y = [1, 0, 1, 0, 0, 1, 0, 0];
  const p = [0.9, 0.8, 0.7, 0.35, 0.3, 0.3, 0.05, 1];

  it("computes the Brier score as the mean squared gap", () => {
    // (0.1² + 0.8² + 0.3² + 0.35² + 0.3² + 0.7² + 0.05² + 1²) / 8 = 2.445 / 8
    expect(brierScore(y, p)).toBeCloseTo(0.305625, 14);
    expect(brierScore([], [])).toBeNaN();
  });

  it("picks the lowest threshold whose alerts reach the precision, though precision is not monotone", () => {
    expect(thresholdForPrecision(y, p, 0.5)).toBe(0.7);
    expect(thresholdForPrecision(y, p, 0.4)).toBe(0.3);
    expect(thresholdForPrecision(y, p, 0.25)).toBe(0.05);
    expect(thresholdForPrecision(y, p, 0.6)).toBeNull();
  });

  it("counts alerts, precision, recall and fire rate at a threshold", () => {
    expect(alertsAt(y, p, 0.3)).toEqual({
      alerts: 7,
      precision: 3 / 7,
      recall: 1,
      fireRate: 7 / 8,
    });
    expect(alertsAt(y, p, 0.75)).toEqual({
      alerts: 3,
      precision: 1 / 3,
      recall: 1 / 3,
      fireRate: 3 / 8,
    });
    expect(alertsAt(y, p, 2)).toEqual({ alerts: 0, precision: null, recall: 0, fireRate: 0 });
  });
});

describe("what would have been caught", () => {
  // By hand: thresholds 0.9 (1 alert, 1 fraud), 0.8 (3, 2), 0.3 (4, 2), 0.1 (5, 2); 2 frauds,
  // 3 good payments.
  const small = { labels: [1, 0, 1, 0, 0], scores: [0.9, 0.8, 0.8, 0.3, 0.1] };

  it("counts the frauds caught and the good payments stopped, with their amounts per currency", () => {
    const amounts = [100, 200, 300, 400, 500];
    const currencies = ["USD", "USD", "EUR", "USD", null];
    expect(caughtByThreshold(small.labels, small.scores, amounts, currencies, [0.5, 0.85])).toEqual(
      {
        slice: {
          payments: 5,
          frauds: 2,
          amounts: [
            { currency: null, fraud: 0, good: 500 },
            { currency: "EUR", fraud: 300, good: 0 },
            { currency: "USD", fraud: 100, good: 600 },
          ],
        },
        thresholds: [
          {
            probability: 0.5,
            alerts: 3,
            frauds: 2,
            goods: 1,
            amounts: [
              { currency: null, fraud: 0, good: 0 },
              { currency: "EUR", fraud: 300, good: 0 },
              { currency: "USD", fraud: 100, good: 200 },
            ],
          },
          {
            probability: 0.85,
            alerts: 1,
            frauds: 1,
            goods: 0,
            amounts: [
              { currency: null, fraud: 0, good: 0 },
              { currency: "EUR", fraud: 0, good: 0 },
              { currency: "USD", fraud: 100, good: 0 },
            ],
          },
        ],
      },
    );
    // Only the currency of the most payments is kept; the counts still count every payment.
    const one = caughtByThreshold(small.labels, small.scores, amounts, currencies, [0.5], 1);
    expect(one.thresholds[0]).toEqual({
      probability: 0.5,
      alerts: 3,
      frauds: 2,
      goods: 1,
      amounts: [{ currency: "USD", fraud: 100, good: 200 }],
    });
  });
});
