import { z } from "@hono/zod-openapi";
import { PaymentReceipt } from "./payment-receipts";
import { DECISIONS, FEEDBACK_LABELS } from "./vocabulary";

// What a reviewer sees beside a review (docs/reviews.md, "Evidence"): the agent's recent
// payments and the payee's labels across the org, read from the payment history.

/** How many of the agent's payments the evidence shows at most. */
export const EVIDENCE_HISTORY_LIMIT = 30;

const HistoryPoint = z
  .object({
    id: z.string().openapi({ description: "The payment: an assessment's id, or an import's" }),
    created: z.string().openapi({ description: "When the payment happened (`occurred_at`)" }),
    amount: z.int().nullable().openapi({ description: "Minor units of `currency`" }),
    currency: z.string().nullable(),
    decision: z.enum(DECISIONS).nullable().openapi({
      description: "The assessment's decision; null for imported history (it happened)",
    }),
    current: z.boolean().openapi({ description: "This is the assessment the evidence is for" }),
  })
  .openapi("EvidencePayment");

const LabelCounts = z
  .object(
    Object.fromEntries(FEEDBACK_LABELS.map((label) => [label, z.int()])) as {
      [K in (typeof FEEDBACK_LABELS)[number]]: z.ZodInt;
    },
  )
  .openapi("EvidenceLabelCounts");

export const AssessmentEvidence = z
  .object({
    object: z.literal("assessment_evidence"),
    assessment_id: z.string(),
    livemode: z.boolean(),
    agent_id: z.string().nullable(),
    agent_history: z.array(HistoryPoint).openapi({
      description:
        "The agent's latest payments up to and including this one (at most 30), oldest first, " +
        "in this mode; empty without an agent",
    }),
    agent_payee_payments: z
      .int()
      .nullable()
      .openapi({
        description:
          "How many earlier payments the agent made to this payee (any decision, imported " +
          "history included); null without an agent or a payee",
      }),
    payee_labels: LabelCounts.extend({
      latest_label: z.enum(FEEDBACK_LABELS).nullable(),
      latest_at: z.string().nullable().openapi({
        description: "When the latest label became known (`known_at`)",
      }),
    })
      .nullable()
      .openapi("EvidencePayeeLabels", {
        description:
          "The labels known now on the org's payments to this payee (every agent, this mode): " +
          "how many payments carry each label, and the latest label; null when the assessment " +
          "names no payee",
      }),
    payment_receipts: z.array(PaymentReceipt).openapi({
      description:
        "The AP2 Payment Receipts recorded against the assessment (POST " +
        "/v1/assessments/{id}/receipts), oldest first, at most 20; GET " +
        "/v1/assessments/{id}/receipts lists them all",
    }),
  })
  .openapi("AssessmentEvidence");
export type AssessmentEvidence = z.infer<typeof AssessmentEvidence>;
