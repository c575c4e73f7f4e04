import { describe, expect, it } from "vitest";
import { aucRoc, averagePrecision, cardPrecisionAtK } from "../../src/model/metrics.ts";

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
