import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { and, eq, gte, lte, max } from "drizzle-orm";
import { A2ABinding } from "../assess/a2a-binding";
import { Outcome, recordJson, toOutcome } from "../assess/outcome";
import { assessments, auditCheckpoints, reviews } from "../db/schema";
import { orNotFound } from "../errors";
import type { AppEnv } from "../http/context";
import { listById, mapPage } from "../http/pagination";
import { guarded } from "../http/route";
import { errorResponses, IdParam, json, rowId } from "../http/schemas";
import { refinementOf } from "../reviews/records";
import { DateTime, listOf, PageQuery } from "../schemas/common";
import { ACTION_KINDS, DECISIONS } from "../schemas/vocabulary";

const AssessmentSummary = z
  .object({
    id: z.string(),
    object: z.literal("assessment"),
    created: z.string(),
    kind: z.enum(ACTION_KINDS),
    livemode: z.boolean(),
    decision: z.enum(DECISIONS),
    risk_level: z.enum(["normal", "elevated", "highest"]),
    risk_score: z.number().int(),
    reason: z.string(),
    agent_id: z.string().nullable(),
    a2a: z.union([A2ABinding, z.null()]).openapi({ description: "The A2A binding, if any" }),
  })
  .openapi("AssessmentSummary");

/** The decision filter takes the spec's spellings: `approved` and `denied` too. */
const STATUS_FILTER = {
  approve: "approve",
  approved: "approve",
  review: "review",
  deny: "deny",
  denied: "deny",
} as const;

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
    // Test and live data are apart, as at Stripe: a key sees the records of its own mode.
    const livemode = c.var.tenant.livemode;
    const list = await listById(
      c.var.tenant,
      assessments,
      { limit: q.limit, cursor: q.cursor },
      eq(assessments.livemode, livemode),
      q.status ? eq(assessments.decision, STATUS_FILTER[q.status]) : undefined,
      q.agent ? eq(assessments.agentId, q.agent.toLowerCase()) : undefined,
      q.kind ? eq(assessments.kind, q.kind) : undefined,
      q.from ? gte(assessments.createdAt, new Date(q.from)) : undefined,
      q.to ? lte(assessments.createdAt, new Date(q.to)) : undefined,
    );
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
    const [rows, anchored, review] = await c.var.tenant.batch((db) => [
      db
        .select({ record: recordJson })
        .from(assessments)
        .where(and(eq(assessments.id, id), eq(assessments.livemode, c.var.tenant.livemode))),
      db.select({ size: max(auditCheckpoints.treeSize) }).from(auditCheckpoints),
      db.select().from(reviews).where(eq(reviews.assessmentId, id)),
    ]);
    const { record } = orNotFound(rows[0]);
    const through = Number(anchored[0]?.size ?? 0);
    const refinement = refinementOf(review[0], record.verify_url);
    return c.json(toOutcome(record, record.audit_sequence <= through, refinement), 200);
  });
}
