// A policy, its stricter draft in shadow, the draft's backtest and its shadow report.

import { DECISIONS } from "../../schemas/vocabulary";
import { APPROVED, list, type OperationExamples, POLICY, SHADOW_POLICY } from "./example-org";

const rules = {
  max_amount: 100_000,
  currencies: ["EUR", "USD"],
  velocity: { window: "1h", max: 20 },
  grammar: 1,
  rules: [
    {
      id: "large-new-payee",
      action: "deny",
      when: {
        all: [
          { attr: "amount", op: "gt", value: 50_000 },
          { attr: "payee.first_seen", op: "eq", value: true },
        ],
      },
      description: "A first payment to a payee above 500.00",
    },
  ],
};

const activePolicy = {
  object: "policy",
  id: POLICY,
  name: "Checkout default",
  status: "active",
  version: 3,
  rules,
  shadow: false,
  created: "2026-11-10T16:45:03.090Z",
  activated_at: "2026-11-10T16:47:30.512Z",
};

const shadowPolicy = {
  ...activePolicy,
  id: SHADOW_POLICY,
  name: "Checkout default, stricter",
  status: "draft",
  version: null,
  rules: { ...rules, max_amount: 50_000 },
  shadow: true,
  created: "2026-11-18T09:12:44.871Z",
  activated_at: null,
};

const matrix = (rows: number[][]) => {
  return Object.fromEntries(
    DECISIONS.map((from, i) => [
      from,
      Object.fromEntries(DECISIONS.map((to, j) => [to, rows[i]?.[j] ?? 0])),
    ]),
  );
};

const labeled = (
  counts: [number, number, number, number, number],
  precision: number,
  recall: number,
  fire: number,
) => ({
  labeled: counts[0],
  fraud_caught: counts[1],
  fraud_missed: counts[2],
  legitimate_blocked: counts[3],
  legitimate_approved: counts[4],
  precision,
  recall,
  fire_rate: fire,
});

const backtest = {
  object: "policy_backtest",
  policy: { id: SHADOW_POLICY, status: "draft", version: null },
  risk_model: null,
  livemode: true,
  from: "2026-10-24T00:00:00.000Z",
  to: "2026-11-23T00:00:00.000Z",
  limit: 10_000,
  replayed: 4_812,
  skipped: 3,
  changed: 41,
  has_more: false,
  truncated: false,
  limits: { rows: 4_815, max_rows: 10_000, aggregates: 0, max_aggregate_evaluations: 200_000 },
  matrix: matrix([
    [4_390, 12, 29],
    [0, 301, 0],
    [0, 0, 80],
  ]),
  rules: [{ id: "large-new-payee", action: "deny", hits: 109 }],
  unmatched: 4_703,
  samples: [
    {
      assessment_id: APPROVED,
      created: "2026-11-20T09:14:03.512Z",
      decision: "approve",
      replayed_decision: "deny",
      rule: "large-new-payee",
      reason:
        'Denied: policy rule "large-new-payee" matched (A first payment to a payee above 500.00).',
    },
  ],
  labeled: {
    recorded: labeled([62, 9, 4, 2, 47], 0.82, 0.69, 0.018),
    policy: labeled([62, 12, 1, 3, 46], 0.8, 0.92, 0.024),
  },
};

const shadowReport = {
  object: "shadow_report",
  policy: { id: SHADOW_POLICY, status: "draft", version: null, shadow: true },
  livemode: true,
  from: "2026-11-18T09:12:44.871Z",
  to: "2026-11-24T09:00:00.000Z",
  shadowed: 1_284,
  agreed: 1_271,
  disagreed: 13,
  matrix: matrix([
    [1_130, 0, 13],
    [0, 94, 0],
    [0, 0, 47],
  ]),
  disagreements: [
    {
      decision: "approve",
      shadow_decision: "deny",
      count: 13,
      labels: { fraud: 2, chargeback: 1, refund: 0, legitimate: 3, pending: 0, unlabeled: 7 },
    },
  ],
  samples: [
    {
      assessment_id: APPROVED,
      created: "2026-11-20T09:14:03.512Z",
      decision: "approve",
      shadow_decision: "deny",
      label: "chargeback",
    },
  ],
};

export const policyExamples: OperationExamples = {
  "GET /v1/policies": list([shadowPolicy, activePolicy]),
  "GET /v1/policies/{id}": activePolicy,
  "POST /v1/policies/{id}/backtest": backtest,
  "GET /v1/policies/{id}/shadow-report": shadowReport,
};
