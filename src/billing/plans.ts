import { sql } from "drizzle-orm";
import { PLANS, type PlanId } from "../schemas/billing";

export const CURRENCY = "usd";
/** Usage at this share of the spending cap asks an owner to confirm going further. */
export const REVIEW_THRESHOLD_PERCENT = 80;

export function planOf(id: string | null | undefined) {
  return PLANS[(id ?? "free") as PlanId] ?? PLANS.free;
}

/** What `assessments` billable calls in one period cost beyond the plan's fee. */
export function usageCharge(plan: string | null | undefined, assessments: number): number {
  const p = planOf(plan);
  return Math.max(0, assessments - p.included) * p.unit_amount;
}

/**
 * The current period's first day, computed by the database (the meter's key). Written out again
 * in the database functions `assess_context` and `persist_assessment` (drizzle/0011, 0012):
 * change all three.
 */
export const PERIOD_START_SQL = sql.raw(`(date_trunc('month', now() at time zone 'UTC'))::date`);

/** What the spend guard needs, read by the assess context query in the same round trip. */
export interface SpendState {
  plan: string;
  /** Minor units; null: no cap, never refused. */
  spending_cap: number | null;
  /** Billable assessments metered so far this period. */
  assessments: number;
  /** `YYYY-MM-DD`, the period's first day (UTC). */
  period_start: string;
}
