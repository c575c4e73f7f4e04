import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { A2ABinding } from "../assess/a2a-binding";
import { getOutcome, listAssessmentRows, STATUS_FILTER } from "../assess/assessment-reads";
import { Outcome } from "../assess/outcome";
import { mapPage } from "../db/pagination";
import type { AppEnv } from "../http/context";
import { guarded } from "../http/route";
import { errorResponses, IdParam, json, rowId } from "../http/schemas";
import { DateTime, listOf, PageQuery } from "../schemas/common";
import { ACTION_KINDS, DECISIONS, RISK_LEVELS } from "../schemas/vocabulary";

const AssessmentSummary = z
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
  })
  .openapi("AssessmentSummary");

const ListAssessmentsQuery = PageQuery.extend({
  status: z.enum(Object.keys(STATUS_FILTER) as [keyof typeof STATUS_FILTER]).optional(),
  agent: z.uuid().optional(),
  kind: z.enum(ACTION_KINDS).optional(),
  from: DateTime.optional().openapi({ description: "created at or after (ISO 8601)" }),
  to: DateTime.optional().openapi({ description: "created at or before (ISO 8601)" }),
});

const tags = ["Assessments"];

const listAssessments = createRoute(
  guarded("assess:read", {
    method: "get",
    path: "/v1/assessments",
    tags,
    summary: "List assessments, newest first",
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
    const q = c.req.valid("query");
    const list = await listAssessmentRows(c.var.tenant, q);
    const summary = (row: (typeof list.data)[number]) => ({
      id: row.id,
      object: "assessment" as const,
      created: row.createdAt.toISOString(),
      kind: row.kind as z.infer<typeof AssessmentSummary>["kind"],
      livemode: row.livemode,
      decision: row.decision,
      risk_level: row.riskLevel,
      risk_score: row.riskScore,
      reason: row.reason,
      agent_id: row.agentId,
      a2a: row.a2a as A2ABinding | null,
    });
    return c.json(mapPage(list, summary), 200);
  });

  app.openapi(getAssessment, async (c) => {
    const id = rowId(c.req.valid("param").id);
    return c.json(await getOutcome(c.var.tenant, id), 200);
  });
}
