import { describe, expect, it } from "vitest";
import { periodWindow, readCap } from "../../src/ap2-credentials/period-caps";
import { judgeSpend, type Spend } from "../../src/ap2-credentials/spend";

// `payment.cumulative` periods are UTC calendar periods (docs/credentials.md, "Period caps").

const ms = (iso: string) => Date.parse(iso);
const iso = ([from, to]: [number, number]) => [
  new Date(from).toISOString(),
  new Date(to).toISOString(),
];

describe("periodWindow", () => {
  it("DAILY is the UTC day, whatever the hour", () => {
    expect(iso(periodWindow("DAILY", ms("2026-11-29T23:59:59.999Z")))).toEqual([
      "2026-11-29T00:00:00.000Z",
      "2026-11-30T00:00:00.000Z",
    ]);
    expect(iso(periodWindow("DAILY", ms("2026-11-30T00:00:00.000Z")))[0]).toBe(
      "2026-11-30T00:00:00.000Z",
    );
  });

  it("WEEKLY is the ISO week, from Monday 00:00 UTC (a Sunday belongs to the week before)", () => {
    // 2026-11-29 is a Sunday, 2026-11-30 a Monday.
    expect(iso(periodWindow("WEEKLY", ms("2026-11-29T12:00:00Z")))).toEqual([
      "2026-11-23T00:00:00.000Z",
      "2026-11-30T00:00:00.000Z",
    ]);
    expect(iso(periodWindow("WEEKLY", ms("2026-11-30T00:00:00Z")))[0]).toBe(
      "2026-11-30T00:00:00.000Z",
    );
    // Across a year: 2027-01-01 is a Friday of the week from Monday 2026-12-28.
    expect(iso(periodWindow("WEEKLY", ms("2027-01-01T08:00:00Z")))[0]).toBe(
      "2026-12-28T00:00:00.000Z",
    );
  });

  it("MONTHLY is the calendar month (February of a leap year has 29 days)", () => {
    expect(iso(periodWindow("MONTHLY", ms("2028-02-29T23:00:00Z")))).toEqual([
      "2028-02-01T00:00:00.000Z",
      "2028-03-01T00:00:00.000Z",
    ]);
    expect(iso(periodWindow("MONTHLY", ms("2026-12-31T23:59:59Z")))[1]).toBe(
      "2027-01-01T00:00:00.000Z",
    );
  });

  it("YEARLY is the calendar year", () => {
    expect(iso(periodWindow("YEARLY", ms("2026-06-15T00:00:00Z")))).toEqual([
      "2026-01-01T00:00:00.000Z",
      "2027-01-01T00:00:00.000Z",
    ]);
  });
});

describe("readCap", () => {
  it("reads a cap in minor units, and refuses what is malformed", () => {
    expect(readCap({ max_total: 5000, currency: "USD", period: "WEEKLY" })).toEqual({
      maxMinor: 5000,
      currency: "USD",
      period: "WEEKLY",
    });
    for (const bad of [
      { max_total: 50.5, currency: "USD", period: "DAILY" },
      { max_total: -1, currency: "USD", period: "DAILY" },
      { max_total: 10, period: "DAILY" },
      { max_total: 10, currency: "USD", period: "daily" },
      { max_total: 10, currency: "USD", period: "BIWEEKLY" },
      { max_total: "10", currency: "USD", period: "DAILY" },
    ]) {
      expect(typeof readCap(bad)).toBe("string");
    }
  });
});

describe("judgeSpend with a period cap", () => {
  const spend: Spend = {
    consent: "c",
    rootSpellings: [],
    transactionId: "tx",
    amount: 1000,
    currency: "USD",
    budgets: [],
    maxOccurrences: null,
    caps: [{ maxMinor: 3000, currency: "USD", period: "DAILY" }],
    at: ms("2026-11-29T10:00:00Z"),
  };
  const recorded = { transactionIds: new Set<string>(), total: 99_000, count: 99 };

  it("fits while the period's total plus the amount is within the cap, whatever the lifetime total", () => {
    expect(judgeSpend(spend, { ...recorded, inPeriod: { DAILY: 2000 } })).toBeNull();
  });

  it("refuses budget_exceeded past it, naming the period", () => {
    const judged = judgeSpend(spend, { ...recorded, inPeriod: { DAILY: 2001 } });
    expect(judged?.refusal).toBe("budget_exceeded");
    expect(judged?.message).toContain("DAILY cap of 3000 USD from 2026-11-29T00:00:00.000Z");
  });
});
