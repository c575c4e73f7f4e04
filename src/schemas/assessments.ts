import { z } from "@hono/zod-openapi";
import { plainText } from "./common";
import { ACTION_KINDS, DECISIONS, RISK_LEVELS } from "./vocabulary";

// The assessment as lists show it (GET /v1/assessments, and each review item's `assessment`):
// the transaction and who stands behind it, in the words a person reads (docs/assess.md,
// "Listing assessments").

export const A2A_VERSIONS = ["0.3", "1.0"] as const;
export type A2AVersion = (typeof A2A_VERSIONS)[number];

/** The A2A binding of an assessment, as stored and as listed. */
export const A2ABinding = z
  .object({
    version: z.enum(A2A_VERSIONS),
    task_id: z.string().nullable(),
    context_id: z.string().nullable(),
    agent_card_ref: z.string().nullable(),
  })
  .openapi("A2ABinding");
export type A2ABinding = z.infer<typeof A2ABinding>;

/** The active learned model's answer (docs/risk-model.md, "The learned model"). */
export const ModelOutcome = z
  .object({
    id: z.string(),
    version: z.number().int().nullable(),
    probability: z.number().min(0).max(1),
  })
  .openapi("ModelOutcome", {
    description:
      "The org's active risk model: its fraud probability for this action (4 decimals), from " +
      "which `risk_score` derives. Absent when the mode has no active model",
  });
export type ModelOutcome = z.infer<typeof ModelOutcome>;

/** A count of other organizations, as `outcome.network` gives it. */
function orgCount(description: string) {
  return z.number().int().min(0).openapi({ description, example: 0 });
}

/**
 * What the network of opted-in organizations knows of this action's identifiers (issue 41;
 * docs/network.md): counts of other organizations, never any organization's records.
 */
export const NetworkOutcome = z
  .object({
    payee_fraud_orgs: orgCount(
      "Other organizations that confirmed fraud (or a chargeback) on a payment to this payee " +
        "in the window",
    ),
    payee_legitimate_orgs: orgCount(
      "Other organizations that confirmed a payment to this payee legitimate in the window",
    ),
    agent_key_fraud_orgs: orgCount(
      "Other organizations that confirmed fraud on a payment signed with this agent key " +
        "(its RFC 7638 thumbprint) in the window",
    ),
    agent_key_legitimate_orgs: orgCount(
      "Other organizations that confirmed a payment by this agent key legitimate in the window",
    ),
    issuer_fraud_orgs: orgCount(
      "Other organizations that confirmed fraud on a payment whose AP2 credential this " +
        "issuer key verified, in the window; 0 without a credential whose root verified",
    ),
    issuer_legitimate_orgs: orgCount(
      "Other organizations that confirmed such a payment legitimate in the window",
    ),
    instrument_fraud_orgs: orgCount(
      "Other organizations that confirmed fraud on a payment with this payment instrument " +
        "(the payment mandate's `payment_instrument.fingerprint`) in the window; 0 without one",
    ),
    instrument_legitimate_orgs: orgCount(
      "Other organizations that confirmed a payment with this instrument legitimate in the window",
    ),
    window_days: z.literal(30).openapi({
      description: "The window counted: the 30 UTC days up to the assessment's time",
    }),
    k: z
      .number()
      .int()
      .min(3)
      .openapi({
        description:
          "The k-anonymity floor: an identifier fewer than `k` other organizations sent anything " +
          "about in the window reads 0 in every count",
        example: 3,
      }),
  })
  .openapi("NetworkOutcome", {
    description:
      "What other organizations of the network confirmed about this action's payee, agent key, " +
      "credential issuer key and payment instrument in the last 30 days: numbers of " +
      "organizations, the asking one never among them. A fraud count weighs each organization " +
      "by the precision of its labels once it has enough of them, rounded. Absent when the " +
      "organization does not consume network signals in this mode",
    example: {
      payee_fraud_orgs: 4,
      payee_legitimate_orgs: 1,
      agent_key_fraud_orgs: 0,
      agent_key_legitimate_orgs: 0,
      issuer_fraud_orgs: 0,
      issuer_legitimate_orgs: 0,
      instrument_fraud_orgs: 0,
      instrument_legitimate_orgs: 0,
      window_days: 30,
      k: 3,
    },
  });
export type NetworkOutcome = z.infer<typeof NetworkOutcome>;

/** Who made an assessment's decision, as `decided_by` derives it (docs/assess.md). */
export const DECIDERS = ["person", "rule", "model", "score"] as const;
export type Decider = (typeof DECIDERS)[number];

export const AssessmentSummary = z
  .object({
    id: z.string(),
    object: z.literal("assessment"),
    created: z.string(),
    kind: z.enum(ACTION_KINDS),
    livemode: z.boolean(),
    decision: z.enum(DECISIONS),
    risk_level: z.enum(RISK_LEVELS),
    risk_score: z.number().int(),
    reason: z.string(),
    agent_id: z.string().nullable(),
    a2a: z.union([A2ABinding, z.null()]).openapi({ description: "The A2A binding, if any" }),
    amount: z.number().int().nullable().openapi({
      description: "In the currency's minor units (ISO 4217 exponent: JPY has none)",
    }),
    currency: z.string().nullable().openapi({ description: "ISO 4217, as the mandate wrote it" }),
    payee: z.object({ id: z.string(), name: z.string().nullable() }).nullable().openapi({
      description: "The payment's payee (AP2 `payee`: the merchant); null for other kinds",
    }),
    transaction_id: z.string().nullable().openapi({
      description:
        "The AP2 payment mandate's `transaction_id` (a checkout mandate's `checkout_hash`); null without one",
    }),
    agent: z.object({ id: z.string(), name: z.string() }).nullable().openapi({
      description: "The acting agent as it is named now; null when none was identified",
    }),
    principal: z
      .object({ id: z.string(), name: z.string().nullable(), erased: z.boolean() })
      .nullable()
      .openapi({
        description:
          "Who the agent acts for. `name` is null once the principal is erased (`erased: true`), " +
          "or when it has none",
      }),
    model: z.union([ModelOutcome, z.null()]).openapi({
      description: "The active risk model's answer; null when the mode had none",
    }),
    credential: z
      .object({
        status: z.enum(["verified", "refused"]),
        failure: z.string().nullable(),
        reason: z.string().nullable(),
      })
      .nullable()
      .openapi({
        description:
          "What an AP2 credential proved: `refused` with the failure and the rejection reason's " +
          "words; null for an assessment made without a credential",
      }),
    decided_by: z
      .object({
        type: z.enum(DECIDERS),
        rule: z.string().nullable(),
        reviewer: z.string().nullable(),
      })
      .openapi({
        description:
          "`person` once a review resolved it (`reviewer`: the user or API key id); `rule` when " +
          "a policy rule or limit decided (`rule`: the rule's id, or the limit's rejection key); " +
          "`model` when the active risk model scored it; else `score` (docs/assess.md)",
      }),
    review: z
      .object({
        id: z.string(),
        status: z.enum(["open", "resolved", "expired"]),
        decision: z.enum(["approve", "deny"]).nullable(),
      })
      .nullable()
      .openapi({ description: "The review a `review` decision opened, and how it ended" }),
  })
  .openapi("AssessmentSummary");
export type AssessmentSummary = z.infer<typeof AssessmentSummary>;

/** A non-negative integer of a query string, exact: no sign, exponent, blank or spaces. */
function queryInteger(max: number, description: string) {
  return z
    .string()
    .regex(/^(0|[1-9][0-9]{0,15})$/, "must be a non-negative integer")
    .transform(Number)
    .pipe(z.number().int().max(max))
    .openapi({ type: "integer", minimum: 0, maximum: max, description });
}

/**
 * The search and range filters of GET /v1/assessments (docs/assess.md, "Listing assessments").
 * Ranges are flat `<field>_gte` / `<field>_lte` names, inclusive, like `from` and `to` beside
 * them (Stripe writes `amount[gte]`, which OpenAPI clients handle unevenly).
 */
export const AssessmentSearchFields = {
  q: plainText(200)
    .optional()
    .openapi({
      description:
        "One box: an assessment id, a `transaction_id` or a payee id (exact), a payee name or " +
        "an agent name (prefix, case-insensitive), or an agent id (exact)",
      example: "acme",
    }),
  payee: plainText(200).optional().openapi({ description: "The payee's id (exact)" }),
  currency: z
    .string()
    .regex(/^[A-Za-z]{3}$/, "must be an ISO 4217 code (3 letters)")
    .transform((code) => code.toUpperCase())
    .optional()
    .openapi({ description: "ISO 4217 code, any case", example: "USD" }),
  amount_gte: queryInteger(Number.MAX_SAFE_INTEGER, "Amount at least, in minor units").optional(),
  amount_lte: queryInteger(Number.MAX_SAFE_INTEGER, "Amount at most, in minor units").optional(),
  score_gte: queryInteger(100, "risk_score at least (0-100)").optional(),
  score_lte: queryInteger(100, "risk_score at most (0-100)").optional(),
};

type Ranged = { amount_gte?: number; amount_lte?: number; score_gte?: number; score_lte?: number };

/** 400 for a range whose lower bound is above its upper bound: it could only ever be empty. */
export function checkRanges(q: Ranged, ctx: z.RefinementCtx): void {
  for (const field of ["amount", "score"] as const) {
    const low = q[`${field}_gte`];
    const high = q[`${field}_lte`];
    if (low !== undefined && high !== undefined && low > high) {
      ctx.addIssue({
        code: "custom",
        path: [`${field}_gte`],
        message: `must not be above ${field}_lte (${high})`,
      });
    }
  }
}
