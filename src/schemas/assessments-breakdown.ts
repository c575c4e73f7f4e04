import { z } from "@hono/zod-openapi";

// The period's breakdown of assessments (docs/assess.md, "Breakdown"): what the console's
// Overview draws beside the per-day summary. The query is the summary's (`SummaryQuery`).

/** Bins of `risk_score` (0–100): ten of width 10, the last one holding 100 too. */
export const SCORE_BINS = 10;
/** Entries of each top list. */
export const TOP = 10;

const Rate = z.number().nullable();

const Amount = z
  .object({
    currency: z.string().openapi({ example: "USD" }),
    amount: z.number().int().openapi({ description: "Summed, in the currency's minor units" }),
  })
  .openapi("BreakdownAmount");

const Amounts = z.array(Amount).openapi({
  description:
    "Amounts summed per currency (minor units), by currency code; assessments without an " +
    "amount are counted but add nothing",
});

const Bin = z.object({
  min: z.int().openapi({ description: "Lowest score of the bin" }),
  max: z.int().openapi({ description: "Highest score of the bin (inclusive)" }),
  approve: z.int(),
  review: z.int(),
  deny: z.int(),
  total: z.int(),
});

const Code = z.object({
  code: z.string().openapi({ description: "The signal's `type`, or the rejection reason's `key`" }),
  category: z.string(),
  count: z.int().openapi({ description: "Assessments of the period that carry it" }),
});

/** What a payee's or an agent's row shares: its volume and how risky its traffic was. */
const Traffic = {
  count: z.int(),
  amounts: Amounts,
  approve: z.int(),
  review: z.int(),
  deny: z.int(),
  flagged_rate: z.number().openapi({ description: "(review + deny) / count, to 4 decimals" }),
  mean_score: z.number().openapi({ description: "Mean `risk_score`, to 0.1" }),
};

const Payee = z
  .object({
    counterparty: z.string().openapi({
      description: "The payee as history matches it (a digest of its id): the grouping key",
    }),
    id: z
      .string()
      .nullable()
      .openapi({
        description:
          "The payee's id (a payment mandate's `payee.id`) or a message's recipient, read from " +
          "one of its mandates; null when none says (or erasure cleared it)",
      }),
    name: z
      .string()
      .nullable()
      .openapi({ description: "The payee's `name`, when a mandate gives one" }),
    ...Traffic,
  })
  .openapi("BreakdownPayee");

const Agent = z
  .object({
    id: z.string(),
    name: z.string().nullable().openapi({ description: "null for an agent no longer found" }),
    ...Traffic,
  })
  .openapi("BreakdownAgent");

const Ranked = <T extends z.ZodType>(item: T) =>
  z.object({
    by_volume: z.array(item).openapi({
      description: `The ${TOP} with the most assessments (then by key)`,
    }),
    by_risk: z.array(item).openapi({
      description:
        `The ${TOP} with the most review or deny decisions, then the highest mean score ` +
        "(then by key): a count, so that one denied assessment does not outrank a hundred",
    }),
  });

const Caught = z.object({
  count: z.int(),
  amounts: Amounts,
});

/** The agent of the breakdown's example. */
const EXAMPLE_AGENT = {
  id: "0193a5b2-7c1d-7e4f-8a90-1b2c3d4e5f60",
  name: "Shopping agent",
  count: 611,
  amounts: [{ currency: "USD", amount: 4_020_100 }],
  approve: 570,
  review: 30,
  deny: 11,
  flagged_rate: 0.0671,
  mean_score: 18.9,
};

export const AssessmentsBreakdown = z
  .object({
    object: z.literal("assessment_breakdown"),
    livemode: z.boolean(),
    from: z.string().openapi({ description: "The window's start (inclusive), UTC" }),
    to: z.string().openapi({ description: "The window's end (exclusive), UTC" }),
    tz: z.string().openapi({ description: "The time zone the date bounds were read in" }),
    agent: z.string().optional().openapi({
      description: "The agent counted, as asked with `agent`; absent when the query named none",
    }),
    decisions: z.object({
      approve: z.int(),
      review: z.int(),
      deny: z.int(),
      total: z.int(),
      rates: z
        .object({ approve: Rate, review: Rate, deny: Rate })
        .openapi({ description: "Each decision / total, to 4 decimals; null without assessments" }),
    }),
    score_histogram: z.array(Bin).openapi({
      description: `\`risk_score\` in ${SCORE_BINS} bins (0–9, 10–19, …, 90–100) by decision as recorded`,
    }),
    top_signals: z.array(Code).openapi({
      description: `The ${TOP} signal types carried by the most assessments (then by code)`,
    }),
    top_rejection_reasons: z.array(Code).openapi({
      description: `The ${TOP} rejection reason keys carried by the most assessments (then by code)`,
    }),
    labels: z
      .object({
        labeled: z.int().openapi({ description: "Assessments with an effective label" }),
        fraud: z.int().openapi({ description: "Effective label `fraud` or `chargeback`" }),
        legitimate: z.int().openapi({ description: "Effective label `legitimate`" }),
        fraud_rate: Rate.openapi({ description: "fraud / all assessments, to 4 decimals" }),
        fraud_caught: Caught.openapi({
          description: "Fraud decided `review` or `deny`, with its amounts",
        }),
        fraud_missed: Caught.openapi({ description: "Fraud decided `approve`, with its amounts" }),
        legitimate_flagged: z.int().openapi({
          description: "Effective label `legitimate`, decided `review` or `deny`",
        }),
      })
      .openapi({
        description:
          "The period's assessments against their effective feedback labels as known now " +
          "(docs/feedback.md): the same definitions as a backtest's `labeled`",
      }),
    payees: Ranked(Payee),
    agents: Ranked(Agent),
  })
  .openapi("AssessmentsBreakdown", {
    example: {
      object: "assessment_breakdown",
      livemode: true,
      from: "2026-11-01T00:00:00.000Z",
      to: "2026-11-04T00:00:00.000Z",
      tz: "UTC",
      decisions: {
        approve: 800,
        review: 56,
        deny: 23,
        total: 879,
        rates: { approve: 0.9101, review: 0.0637, deny: 0.0262 },
      },
      score_histogram: [
        { min: 0, max: 9, approve: 512, review: 0, deny: 0, total: 512 },
        { min: 10, max: 19, approve: 201, review: 0, deny: 0, total: 201 },
        { min: 20, max: 29, approve: 87, review: 0, deny: 0, total: 87 },
        { min: 30, max: 39, approve: 0, review: 0, deny: 0, total: 0 },
        { min: 40, max: 49, approve: 0, review: 31, deny: 0, total: 31 },
        { min: 50, max: 59, approve: 0, review: 25, deny: 0, total: 25 },
        { min: 60, max: 69, approve: 0, review: 0, deny: 0, total: 0 },
        { min: 70, max: 79, approve: 0, review: 0, deny: 9, total: 9 },
        { min: 80, max: 89, approve: 0, review: 0, deny: 5, total: 5 },
        { min: 90, max: 100, approve: 0, review: 0, deny: 9, total: 9 },
      ],
      top_signals: [
        { code: "agent_unknown", category: "identity", count: 41 },
        { code: "amount_unusual", category: "behavior", count: 17 },
      ],
      top_rejection_reasons: [{ code: "policy_max_amount", category: "policy", count: 14 }],
      labels: {
        labeled: 64,
        fraud: 12,
        legitimate: 49,
        fraud_rate: 0.0137,
        fraud_caught: { count: 10, amounts: [{ currency: "USD", amount: 1_845_000 }] },
        fraud_missed: { count: 2, amounts: [{ currency: "USD", amount: 21_500 }] },
        legitimate_flagged: 9,
      },
      payees: {
        by_volume: [
          {
            counterparty: "sha256:3f1c…",
            id: "merchant_1",
            name: "Demo Merchant",
            count: 402,
            amounts: [{ currency: "USD", amount: 3_120_400 }],
            approve: 390,
            review: 10,
            deny: 2,
            flagged_rate: 0.0299,
            mean_score: 14.2,
          },
        ],
        by_risk: [
          {
            counterparty: "sha256:9b07…",
            id: "gift-cards-now",
            name: "Gift Cards Now",
            count: 21,
            amounts: [{ currency: "USD", amount: 940_000 }],
            approve: 3,
            review: 9,
            deny: 9,
            flagged_rate: 0.8571,
            mean_score: 71.4,
          },
        ],
      },
      // The example org's one agent leads both lists.
      agents: { by_volume: [EXAMPLE_AGENT], by_risk: [EXAMPLE_AGENT] },
    },
  });
export type AssessmentsBreakdown = z.infer<typeof AssessmentsBreakdown>;
