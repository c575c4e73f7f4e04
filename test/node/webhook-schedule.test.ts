import { describe, expect, it } from "vitest";
import {
  DEFAULT_RETRY_DELAYS,
  delayAfter,
  MAX_DELAY_SECONDS,
  maxAttempts,
  retryDelays,
} from "../../src/webhooks/schedule";

describe("the retry schedule", () => {
  it("defaults to Standard Webhooks': 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h; eight attempts", () => {
    expect(retryDelays({})).toEqual([5, 300, 1800, 7200, 18000, 36000, 36000]);
    expect(maxAttempts(DEFAULT_RETRY_DELAYS)).toBe(8);
    const total = DEFAULT_RETRY_DELAYS.reduce((a, b) => a + b, 0);
    expect(total / 3600).toBeCloseTo(27.6, 1);
  });

  it("jitters each delay within ±10 %, never past the queue's 12 h", () => {
    for (const [i, base] of DEFAULT_RETRY_DELAYS.entries()) {
      expect(delayAfter(i + 1, DEFAULT_RETRY_DELAYS, () => 0)).toBe(Math.round(base * 0.9));
      expect(delayAfter(i + 1, DEFAULT_RETRY_DELAYS, () => 0.5)).toBe(base);
      const high = delayAfter(i + 1, DEFAULT_RETRY_DELAYS, () => 0.999_999) as number;
      expect(high).toBeLessThanOrEqual(Math.min(MAX_DELAY_SECONDS, Math.round(base * 1.1)));
    }
    expect(delayAfter(1, [MAX_DELAY_SECONDS], () => 0.999)).toBe(MAX_DELAY_SECONDS);
  });

  it("answers null after the last attempt", () => {
    expect(delayAfter(7, DEFAULT_RETRY_DELAYS)).not.toBeNull();
    expect(delayAfter(8, DEFAULT_RETRY_DELAYS)).toBeNull();
    expect(delayAfter(2, [1])).toBeNull();
  });

  it("takes WEBHOOK_RETRY_SCHEDULE when well formed, the default otherwise", () => {
    expect(retryDelays({ WEBHOOK_RETRY_SCHEDULE: "1, 2,3" })).toEqual([1, 2, 3]);
    expect(retryDelays({ WEBHOOK_RETRY_SCHEDULE: "0" })).toEqual([0]);
    expect(retryDelays({ WEBHOOK_RETRY_SCHEDULE: "1,2,3,4,5,6,7,8" })).toHaveLength(8);
    for (const bad of ["", "x", "1,,2", "-1", "1.5", "43201", Array(9).fill("1").join(",")]) {
      expect(retryDelays({ WEBHOOK_RETRY_SCHEDULE: bad }), bad).toEqual(DEFAULT_RETRY_DELAYS);
    }
  });
});
