import type { z } from "@hono/zod-openapi";
import type { Tenant } from "../auth/tenant";
import { billingAccounts } from "../db/schema";
import { type Billing, PLANS, type PlanId } from "../schemas/billing";
import { capReached, SPEND_STATE_SQL, type SpendState, spendStateOf } from "./guard";
import { CURRENCY, planOf, REVIEW_THRESHOLD_PERCENT, usageCharge } from "./plans";

export interface AccountState extends SpendState {
  customer: string | null;
  subscription: string | null;
}

/** The org's plan, cap, meter and provider customer: one read (which also authenticates). */
export async function readAccount(tenant: Tenant): Promise<AccountState> {
  const [spend, account] = await tenant.batch((db) => [
    db.execute(SPEND_STATE_SQL),
    db
      .select({
        customer: billingAccounts.providerCustomerId,
        subscription: billingAccounts.providerSubscriptionId,
      })
      .from(billingAccounts),
  ]);
  const state = spendStateOf((spend as unknown as { rows: Record<string, unknown>[] }).rows[0]);
  if (!state) throw new Error("spend state query returned no row");
  return {
    ...state,
    customer: account[0]?.customer ?? null,
    subscription: account[0]?.subscription ?? null,
  };
}

/** GET /v1/billing's body: the plan, the period, usage, projected charge and the cap. */
export function billingView(state: AccountState): z.infer<typeof Billing> {
  const id = (state.plan in PLANS ? state.plan : "free") as PlanId;
  const plan = planOf(id);
  const usage = usageCharge(id, state.assessments);
  const cap = state.spending_cap;
  const start = new Date(`${state.period_start}T00:00:00.000Z`);
  const end = new Date(Date.UTC(start.getUTCFullYear(), start.getUTCMonth() + 1, 1));
  let status: z.infer<typeof Billing>["spending_cap"]["status"] = "none";
  if (cap !== null) {
    status = capReached(state)
      ? "reached"
      : usage > 0 && usage * 100 >= cap * REVIEW_THRESHOLD_PERCENT
        ? "review_required"
        : "ok";
  }
  return {
    object: "billing",
    plan: {
      id,
      object: "plan",
      name: plan.name,
      currency: CURRENCY,
      amount: plan.amount,
      interval: "month",
      included_assessments: plan.included,
      unit_amount: plan.unit_amount,
    },
    current_period: { start: start.toISOString(), end: end.toISOString() },
    usage: {
      assessments: state.assessments,
      included_remaining: Math.max(0, plan.included - state.assessments),
      billable_overage: Math.max(0, state.assessments - plan.included),
    },
    projected_charge: {
      currency: CURRENCY,
      plan_amount: plan.amount,
      usage_amount: usage,
      total: plan.amount + usage,
    },
    spending_cap: {
      amount: cap,
      currency: CURRENCY,
      review_threshold_percent: REVIEW_THRESHOLD_PERCENT,
      status,
    },
    customer: state.customer,
  };
}
