// The org's billing: its plan, the period's usage and its spending cap.

import type { OperationExamples } from "./example-org";

const billing = {
  object: "billing",
  plan: {
    id: "starter",
    object: "plan",
    name: "Starter",
    currency: "usd",
    amount: 4_900,
    interval: "month",
    included_assessments: 10_000,
    unit_amount: 2,
  },
  current_period: { start: "2026-11-01T00:00:00.000Z", end: "2026-12-01T00:00:00.000Z" },
  usage: { assessments: 12_418, included_remaining: 0, billable_overage: 2_418 },
  projected_charge: { currency: "usd", plan_amount: 4_900, usage_amount: 4_836, total: 9_736 },
  spending_cap: { amount: 10_000, currency: "usd", review_threshold_percent: 80, status: "ok" },
  customer: "cus_R8mLqTz3nY6kWp",
};

export const billingExamples: OperationExamples = {
  "GET /v1/billing": billing,
};
