import { z } from "@hono/zod-openapi";

export const billingTags = ["Billing"];

/**
 * The plans, as docs/billing.md publishes them. Amounts are integer minor units of `currency`
 * (cents), as at Stripe. Only live-mode assessments are billable; an assessment past the plan's
 * included ones costs `unit_amount`.
 */
export const PLANS = {
  free: { name: "Free", amount: 0, included: 1_000, unit_amount: 0 },
  starter: { name: "Starter", amount: 4_900, included: 10_000, unit_amount: 2 },
  growth: { name: "Growth", amount: 49_900, included: 250_000, unit_amount: 1 },
} as const;

export type PlanId = keyof typeof PLANS;
export const PLAN_IDS = Object.keys(PLANS) as [PlanId, ...PlanId[]];
/** The plans a checkout can move an org to. */
export const PAID_PLAN_IDS = ["starter", "growth"] as const;

const Minor = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);

export const Plan = z
  .object({
    id: z.enum(PLAN_IDS),
    object: z.literal("plan"),
    name: z.string(),
    currency: z.string().openapi({ example: "usd" }),
    amount: Minor.openapi({ description: "The plan's monthly fee, in minor units" }),
    interval: z.literal("month"),
    included_assessments: z.number().int(),
    unit_amount: Minor.openapi({
      description: "Price of each billable assessment past the included ones, in minor units",
    }),
  })
  .openapi("Plan");

export const Billing = z
  .object({
    object: z.literal("billing"),
    plan: Plan,
    current_period: z.object({
      start: z.string().openapi({ description: "ISO 8601, inclusive" }),
      end: z.string().openapi({ description: "ISO 8601, exclusive" }),
    }),
    usage: z.object({
      assessments: z.number().int().openapi({ description: "Billable assessments this period" }),
      included_remaining: z.number().int(),
      billable_overage: z.number().int(),
    }),
    projected_charge: z.object({
      currency: z.string(),
      plan_amount: Minor,
      usage_amount: Minor.openapi({ description: "Usage charge so far (what the cap bounds)" }),
      total: Minor,
    }),
    spending_cap: z.object({
      amount: Minor.nullable().openapi({ description: "Bound on the usage charge; null: none" }),
      currency: z.string(),
      review_threshold_percent: z.number().int(),
      status: z.enum(["none", "ok", "review_required", "reached"]),
    }),
    customer: z.string().nullable().openapi({ description: "The payment provider's customer id" }),
  })
  .openapi("Billing");

export const SetSpendingCap = z
  .object({
    amount: Minor.openapi({
      description:
        "Cap on the period's usage charge, in minor units. Raising or lifting an " +
        "existing cap takes an owner's confirmation (POST /v1/billing/spend_confirmations)",
      example: 5000,
    }),
  })
  .strict()
  .openapi("SetSpendingCapRequest");

export const CreateSpendConfirmation = z
  .object({
    spending_cap: Minor.nullable().openapi({
      description: "The new cap, above the current one; null lifts the cap",
      example: 20000,
    }),
  })
  .strict()
  .openapi("CreateSpendConfirmationRequest");

export const SpendConfirmation = z
  .object({
    id: z.string(),
    object: z.literal("spend_confirmation"),
    period_start: z.string(),
    previous_spending_cap: Minor.nullable(),
    spending_cap: Minor.nullable(),
    currency: z.string(),
    confirmed_by: z.string().openapi({ description: "The owner's user id" }),
    created: z.number().int().openapi({ description: "Unix seconds" }),
  })
  .openapi("SpendConfirmation");

export const CreateCheckout = z
  .object({
    plan: z.enum(PAID_PLAN_IDS),
    success_url: z.url({ protocol: /^https?$/ }).max(2048),
    cancel_url: z.url({ protocol: /^https?$/ }).max(2048),
  })
  .strict()
  .openapi("CreateCheckoutRequest");

export const Checkout = z
  .object({
    id: z.string().openapi({ description: "The provider's Checkout Session id (`cs_…`)" }),
    object: z.literal("checkout_session"),
    plan: z.enum(PAID_PLAN_IDS),
    url: z.string().openapi({ description: "The hosted checkout page to send the customer to" }),
    status: z.literal("open"),
    expires_at: z.number().int().openapi({ description: "Unix seconds" }),
  })
  .openapi("CheckoutSession");
