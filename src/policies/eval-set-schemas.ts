import { z } from "@hono/zod-openapi";
import { plainText } from "../schemas/common";
import { EvalCase, MAX_CASES } from "./eval-cases";
import { FromHistory } from "./eval-history";

export const CreateEvalSet = z
  .strictObject({
    name: plainText(200),
    description: plainText(1000).optional(),
    cases: z.array(EvalCase).min(1).max(MAX_CASES).optional(),
    from_history: FromHistory.optional().openapi({
      description: "Build the cases from labeled assessments instead (docs/feedback.md)",
    }),
  })
  .refine((body) => (body.cases === undefined) !== (body.from_history === undefined), {
    path: ["cases"],
    message: "give exactly one of cases and from_history",
  })
  .openapi("CreateEvalSetRequest");

const summaryFields = {
  object: z.literal("eval_set"),
  id: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  case_count: z.int(),
  created: z.string(),
};
export const EvalSetSummary = z.object(summaryFields).openapi("EvalSetSummary");
export const EvalSet = z.object({ ...summaryFields, cases: z.array(EvalCase) }).openapi("EvalSet", {
  description: "The cases as stored: defaults filled in, `at` and `geo` resolved",
});
export const DeletedEvalSet = z
  .object({ object: z.literal("eval_set"), id: z.string(), deleted: z.literal(true) })
  .openapi("DeletedEvalSet");
