/**
 * `payment.cumulative`: a cap on the sum of the payments approved under an open mandate within a
 * calendar period (Verifiable Intent's cumulative constraint), an extension AP2 v0.2 and its SDK
 * do not define (docs/credentials.md, "Period caps"). It sits in the open payment mandate's
 * `constraints` like `payment.budget`:
 *
 *   {"type": "payment.cumulative", "max_total": 50000, "currency": "USD", "period": "MONTHLY"}
 *
 * `max_total` is in minor units, an integer, like every AP2 amount but `payment.budget.max`.
 * Periods are UTC calendar periods: DAILY the UTC day, WEEKLY the ISO week (from Monday 00:00
 * UTC), MONTHLY the calendar month, YEARLY the calendar year; a payment counts in the period of
 * the time it was assessed at (a test clock's time under one).
 */
import { CAP_PERIODS } from "../schemas/vocabulary";
import { type Claims, own, safeInteger, text } from "./claims";

export { CAP_PERIODS };
export type CapPeriod = (typeof CAP_PERIODS)[number];

export interface PeriodCap {
  /** Minor units of `currency`. */
  maxMinor: number;
  currency: string;
  period: CapPeriod;
}

/** The cap a constraint states, or why it is malformed. */
export function readCap(constraint: Claims): PeriodCap | string {
  const maxMinor = safeInteger(own(constraint, "max_total"));
  const currency = text(own(constraint, "currency"));
  const period = own(constraint, "period");
  if (maxMinor === undefined || maxMinor < 0 || !currency) {
    return "currency and a non-negative integer max_total (minor units) are required";
  }
  if (!(CAP_PERIODS as readonly unknown[]).includes(period)) {
    return `period must be one of ${CAP_PERIODS.join(", ")}`;
  }
  return { maxMinor, currency, period: period as CapPeriod };
}

const DAY_MS = 86_400_000;

/** The UTC calendar period holding `atMs`, as [start, end) epoch ms. */
export function periodWindow(period: CapPeriod, atMs: number): [number, number] {
  const at = new Date(atMs);
  const y = at.getUTCFullYear();
  const m = at.getUTCMonth();
  const day = Date.UTC(y, m, at.getUTCDate());
  switch (period) {
    case "DAILY":
      return [day, day + DAY_MS];
    case "WEEKLY": {
      // ISO 8601: weeks start on Monday; getUTCDay() is 0 on Sunday.
      const monday = day - ((at.getUTCDay() + 6) % 7) * DAY_MS;
      return [monday, monday + 7 * DAY_MS];
    }
    case "MONTHLY":
      return [Date.UTC(y, m, 1), Date.UTC(y, m + 1, 1)];
    case "YEARLY":
      return [Date.UTC(y, 0, 1), Date.UTC(y + 1, 0, 1)];
  }
}
