import { describe, expect, it } from "vitest";
import { MAX_BACKTEST_AGGREGATE_EVALUATIONS, rowsWithin } from "../../src/policies/backtest";

describe("a backtest's work per call", () => {
  it("is the caller's limit when the policy counts few aggregates", () => {
    expect(rowsWithin(10_000, 0)).toBe(10_000);
    expect(rowsWithin(100_000, 1)).toBe(100_000);
    expect(rowsWithin(100_000, 5)).toBe(100_000);
  });

  it("replays fewer rows as the policy counts more aggregates per row", () => {
    expect(MAX_BACKTEST_AGGREGATE_EVALUATIONS).toBe(500_000);
    expect(rowsWithin(100_000, 8)).toBe(62_500);
    expect(rowsWithin(100_000, 64)).toBe(7_812);
    expect(rowsWithin(100_000, 8) * 8).toBeLessThanOrEqual(MAX_BACKTEST_AGGREGATE_EVALUATIONS);
  });
});
