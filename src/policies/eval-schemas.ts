import { z } from "@hono/zod-openapi";
import { PolicyRules } from "../assess/policy";
import { RowUuid } from "../schemas/agents";
import { PageQuery } from "../schemas/common";
import { DECISIONS, EVAL_POSITIVES } from "../schemas/vocabulary";

export const RunEval = z
  .strictObject({
    eval_set_id: z.uuid(),
    policy_id: z.uuid(),
    positive: z.enum(EVAL_POSITIVES).default("review_or_deny").openapi({
      description: "The decisions that count as flagging an action (the positive class)",
    }),
  })
  .openapi("RunEvalRequest");

const Counts = z.object({ approve: z.int(), review: z.int(), deny: z.int() });
const ratio = z.number().min(0).max(1);

const summaryFields = {
  object: z.literal("eval"),
  id: z.string(),
  eval_set_id: z.string(),
  eval_set_name: z.string(),
  policy_id: z.string(),
  positive: z.enum(EVAL_POSITIVES),
  case_count: z.int(),
  metrics: z.object({
    precision: ratio.nullable(),
    recall: ratio.nullable(),
    f1: ratio.nullable(),
    accuracy: ratio,
    approval_rate: ratio,
    decision_accuracy: ratio.nullable(),
  }),
  confusion: z.object({
    tp: z.int(),
    fp: z.int(),
    tn: z.int(),
    fn: z.int(),
    decisions: z
      .object({ approve: Counts, review: Counts, deny: Counts })
      .openapi({ description: "`decisions[expected][decided]`, cases labeled with a decision" }),
  }),
  created: z.string(),
};

export const EvalSummary = z.object(summaryFields).openapi("EvalSummary", {
  description:
    "An evaluation without its policy's rules and its misclassified cases " +
    "(`GET /v1/evals/{id}` has them)",
});

export const Eval = z
  .object({
    ...summaryFields,
    policy_rules: PolicyRules.openapi({ description: "The policy's rules as scored" }),
    misclassified: z.array(
      z.object({
        index: z.int(),
        id: z.string().nullable(),
        expected: z.enum(DECISIONS).nullable(),
        fraud: z.boolean().nullable(),
        decision: z.enum(DECISIONS),
        risk_score: z.int(),
        rule: z.string().nullable(),
        reason: z.string(),
      }),
    ),
  })
  .openapi("Eval");

// A filter that is no uuid is the caller's mistake (400, after authentication), not an empty page.
export const ListEvalsQuery = PageQuery.extend({
  eval_set_id: RowUuid.optional(),
  policy_id: RowUuid.optional(),
});
