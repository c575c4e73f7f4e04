import { z } from "@hono/zod-openapi";
import { RowUuid } from "./agents";
import { DateTime, Metadata, PageQuery, plainText } from "./common";
import { GAP_CODES } from "./vocabulary";

export const coverageTags = ["Control coverage"];

/** `payment.executed`, `message.sent`, `custom.refund_issued`: lowercase dotted segments. */
const EffectName = z
  .string()
  .max(100)
  .regex(
    /^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+$/,
    "lowercase dotted segments, e.g. payment.executed",
  )
  .openapi({ example: "payment.executed" });

const Currency = z
  .string()
  .regex(/^[A-Z]{3}$/, "an ISO 4217 code")
  .openapi({ example: "USD" });

const Amount = z
  .number()
  .int()
  .min(0)
  // int() already refuses anything beyond Number.MAX_SAFE_INTEGER (one detail, not two).
  .openapi({ description: "ISO 4217 minor units, at most 2^53 − 1" });

const AssessmentGate = z.object({ assessment_id: RowUuid }).strict();
const GrantGate = z.object({ grant_id: RowUuid }).strict();
const DecisionGate = z.object({ decision_id: RowUuid }).strict();

/** Exactly one of the three: the gate the executor passed before acting. */
export const Gate = z
  .union([AssessmentGate, GrantGate, DecisionGate])
  .openapi("ControlEffectGate", {
    description:
      "The gate passed before the effect: exactly one of `assessment_id`, `grant_id`, `decision_id`",
  });

export const CreateControlEffect = z
  .object({
    effect: EffectName,
    observer: plainText(200).openapi({ example: "stripe-webhook" }),
    reference: plainText(500).openapi({
      description: "The rail's own reference (idempotency: one effect per observer and reference)",
      example: "pi_3PZ0",
    }),
    occurred_at: DateTime.openapi({ description: "When it happened, by the observer's clock" }),
    action: plainText(200).optional().openapi({ example: "payment.capture" }),
    resource: plainText(1000).optional().openapi({ example: "merchant:acme/order-1" }),
    amount: Amount.optional(),
    currency: Currency.optional(),
    gate: Gate.optional(),
    metadata: Metadata.optional(),
  })
  .strict()
  .refine((body) => (body.amount === undefined) === (body.currency === undefined), {
    message: "amount and currency go together",
    path: ["currency"],
  })
  .openapi("CreateControlEffectRequest");

const Audit = z.object({ entry_id: z.string(), sequence: z.number().int() });

export const Gap = z
  .object({
    code: z.enum(GAP_CODES),
    message: z.string(),
    effect_id: z.string().nullable(),
    reference: z.string().nullable(),
    occurred_at: z.string().nullable(),
    assessment_id: z.string().nullable(),
    decision_id: z.string().nullable(),
    grant_id: z.string().nullable(),
  })
  .openapi("CoverageGap");

export const ControlEffect = z
  .object({
    object: z.literal("control_effect"),
    id: z.string(),
    effect: z.string(),
    observer: z.string(),
    reference: z.string(),
    occurred_at: z.string(),
    action: z.string().nullable(),
    resource: z.string().nullable(),
    amount: z.number().int().nullable(),
    currency: z.string().nullable(),
    gate: z.union([Gate, z.null()]),
    metadata: z.record(z.string(), z.string()),
    reported_by: z
      .object({ type: z.enum(["api_key", "user"]), id: z.string() })
      .openapi({ description: "Who reported the effect: the calling API key or user" }),
    created: z.string(),
    livemode: z.boolean(),
    audit: Audit,
  })
  .openapi("ControlEffect");

export const ControlEffectWithMatch = ControlEffect.extend({
  match: z.object({
    status: z.enum(["gated", "ungated"]),
    gaps: z.array(Gap),
  }),
}).openapi("ControlEffectWithMatch");

export const ListEffectsQuery = PageQuery.extend({
  effect: EffectName.optional(),
  observer: plainText(200).optional(),
  reference: plainText(500).optional(),
  has_gate: z.enum(["true", "false"]).optional().openapi({
    description: "`false`: only effects that name no gate; `true`: only those that name one",
  }),
}).strict();

export const PeriodQuery = z
  .object({
    from: DateTime.optional().openapi({ description: "Inclusive; default: `to` minus 24 hours" }),
    to: DateTime.optional().openapi({ description: "Exclusive; default: now" }),
  })
  // A misspelt parameter must not silently sign the default period.
  .strict();

export const Coverage = z
  .object({
    object: z.literal("control_coverage"),
    livemode: z.boolean(),
    period: z.object({ from: z.string(), to: z.string() }),
    effects: z.object({
      observed: z.number().int(),
      gated: z.number().int().openapi({ description: "Effects without a gap" }),
      gated_by_redemption: z.number().int().openapi({
        description: "Gated effects whose gate is a redeemed grant: proof an executor accepted it",
      }),
      gated_by_assessment: z.number().int().openapi({
        description: "Gated effects whose gate is an approved assessment",
      }),
      ungated: z.number().int(),
    }),
    gates: z.object({
      approved_assessments: z.number().int(),
      grants_issued: z.number().int(),
      grants_redeemed: z.number().int(),
    }),
    coverage_ratio: z
      .number()
      .nullable()
      .openapi({ description: "gated / observed; null if none" }),
    redemption_coverage_ratio: z.number().nullable().openapi({
      description: "gated_by_redemption / observed; null if none",
    }),
    truncated: z.boolean().openapi({
      description: "More effects or gates than one computation evaluates: narrow the period",
    }),
    gaps: z.array(Gap),
    gaps_truncated: z.boolean(),
  })
  .openapi("ControlCoverage");

const ReportCheckpoint = z.object({
  tree_size: z.number().int(),
  root_hash: z.string(),
  time: z.string(),
  note: z.string(),
  jws: z.string(),
});

export const Report = Coverage.extend({
  id: z.string(),
  org_id: z.string(),
  log_id: z.string(),
  generated_at: z.string(),
  ledger: z.object({
    head_sequence: z.number().int().openapi({
      description: "The highest ledger sequence stored when the effects were read (0 if none)",
    }),
    head_hash: z.string().nullable().openapi({ description: "Its hash; null if none" }),
    effects_digest: z.string().openapi({
      description: "sha256 of JCS([[effect id, audit sequence], …]) in evaluation order",
    }),
    checkpoint: ReportCheckpoint.nullable(),
  }),
  disclosures: z.object({
    observed: z.string(),
    gated: z.string(),
    cannot_prove: z.array(z.string()),
  }),
}).openapi("ControlCoverageReportBody");

export const SignedReport = z
  .object({
    object: z.literal("control_coverage_report"),
    id: z.string(),
    report: Report,
    jws: z.string().openapi({
      description:
        "Compact JWS (EdDSA, typ `coverage-report+jwt`) whose payload is UTF-8(JCS(report))",
    }),
    audit: Audit,
  })
  .openapi("ControlCoverageReport");
