import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { getOutcome, listAssessmentSummaries, STATUS_FILTER } from "../assess/assessment-reads";
import { Outcome } from "../assess/outcome";
import type { AppEnv } from "../http/context";
import { guarded } from "../http/route";
import { errorResponses, IdParam, json, rowId } from "../http/schemas";
import { AssessmentSearchFields, AssessmentSummary, checkRanges } from "../schemas/assessments";
import { DateTime, listOf, PageQuery } from "../schemas/common";
import { ACTION_KINDS } from "../schemas/vocabulary";

const ListAssessmentsQuery = PageQuery.extend({
  status: z.enum(Object.keys(STATUS_FILTER) as [keyof typeof STATUS_FILTER]).optional(),
  agent: z.uuid().optional(),
  kind: z.enum(ACTION_KINDS).optional(),
  from: DateTime.optional().openapi({ description: "created at or after (ISO 8601)" }),
  to: DateTime.optional().openapi({ description: "created at or before (ISO 8601)" }),
  ...AssessmentSearchFields,
}).superRefine(checkRanges);

const tags = ["Assessments"];

const listAssessments = createRoute(
  guarded("assess:read", {
    method: "get",
    path: "/v1/assessments",
    tags,
    summary: "List assessments, newest first",
    description:
      "Every filter combines with the others and with keyset pagination: `q` searches ids " +
      "(assessment, transaction, payee, agent) exactly and payee and agent names by prefix; " +
      "`payee`, `currency`, and the inclusive ranges `amount_gte`/`amount_lte` (minor units) " +
      'and `score_gte`/`score_lte` narrow the list (docs/assess.md, "Listing assessments").',
    request: { query: ListAssessmentsQuery },
    responses: {
      200: json(listOf(AssessmentSummary, "AssessmentList"), "A page of assessments"),
      ...errorResponses(400, 401, 403, 503),
    },
  }),
);

const getAssessment = createRoute(
  guarded("assess:read", {
    method: "get",
    path: "/v1/assessments/{id}",
    tags,
    summary: "Retrieve an assessment: the Outcome, as POST /v1/assess answered it",
    request: { params: IdParam },
    responses: { 200: json(Outcome, "The outcome"), ...errorResponses(401, 403, 404, 503) },
  }),
);

export function registerAssessments(app: OpenAPIHono<AppEnv>) {
  app.openapi(listAssessments, async (c) => {
    return c.json(await listAssessmentSummaries(c.var.tenant, c.req.valid("query")), 200);
  });

  app.openapi(getAssessment, async (c) => {
    const id = rowId(c.req.valid("param").id);
    return c.json(await getOutcome(c.var.tenant, id), 200);
  });
}
