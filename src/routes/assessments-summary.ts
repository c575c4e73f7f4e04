import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { assessmentsSummary } from "../assess/summary";
import type { AppEnv } from "../http/context";
import { guarded } from "../http/route";
import { errorResponses, json } from "../http/schemas";
import {
  AssessmentsSummary,
  MAX_SUMMARY_DAYS,
  SummaryQuery,
  summaryWindow,
} from "../schemas/assessments-summary";

const route = createRoute(
  guarded("assess:read", {
    method: "get",
    path: "/v1/assessments/summary",
    tags: ["Assessments"],
    summary: "Assessments per day by decision, with latency percentiles",
    description:
      "Over the window's assessments of the key's mode: for every day the window touches, in " +
      "`tz` (default UTC), " +
      "(days without assessments included, with zeros), the counts by decision as recorded " +
      "(a review's resolution does not move it) and the p50 and p99 of `latency_ms`; and the " +
      `same over the whole window with the approval rate. At most ${MAX_SUMMARY_DAYS} days ` +
      "(docs/assess.md, Summary).",
    request: { query: SummaryQuery },
    responses: {
      200: json(AssessmentsSummary, "The summary"),
      ...errorResponses(400, 401, 403, 503),
    },
  }),
);

/**
 * Registered before `GET /v1/assessments/{id}`: Hono runs the first route that matches, and
 * `summary` would otherwise reach the read by id (and be its 404, not being a uuid).
 */
export function registerAssessmentsSummary(app: OpenAPIHono<AppEnv>) {
  app.openapi(route, async (c) => {
    const query = c.req.valid("query");
    const window = summaryWindow(query, Date.now());
    const body = await assessmentsSummary(c.var.tenant, { ...window, agent: query.agent ?? null });
    return c.json(
      {
        object: "assessment_summary" as const,
        livemode: c.var.tenant.livemode,
        ...window,
        ...(query.agent === undefined ? {} : { agent: query.agent }),
        ...body,
      },
      200,
    );
  });
}
