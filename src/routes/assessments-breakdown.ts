import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { assessmentsBreakdown } from "../assess/breakdown";
import type { AppEnv } from "../http/context";
import { guarded } from "../http/route";
import { errorResponses, json } from "../http/schemas";
import { AssessmentsBreakdown, TOP } from "../schemas/assessments-breakdown";
import { MAX_SUMMARY_DAYS, SummaryQuery, summaryWindow } from "../schemas/assessments-summary";

const route = createRoute(
  guarded("assess:read", {
    method: "get",
    path: "/v1/assessments/breakdown",
    tags: ["Assessments"],
    summary: "The period's decisions, scores, signals, labels, payees and agents",
    description:
      "Over the window's assessments of the key's mode (the window is read as by " +
      "`GET /v1/assessments/summary`, at most " +
      `${MAX_SUMMARY_DAYS} days): the decisions and their rates, the \`risk_score\` histogram ` +
      `by decision, the top ${TOP} signals and rejection reasons, the effective feedback labels ` +
      "(fraud rate, fraud caught and missed with amounts per currency), and the top payees and " +
      "agents by volume and by risk (docs/assess.md, Breakdown).",
    request: { query: SummaryQuery },
    responses: {
      200: json(AssessmentsBreakdown, "The breakdown"),
      ...errorResponses(400, 401, 403, 503),
    },
  }),
);

/** Registered before `GET /v1/assessments/{id}`, as the summary is. */
export function registerAssessmentsBreakdown(app: OpenAPIHono<AppEnv>) {
  app.openapi(route, async (c) => {
    const query = c.req.valid("query");
    const window = summaryWindow(query, Date.now());
    const body = await assessmentsBreakdown(c.var.tenant, {
      ...window,
      agent: query.agent ?? null,
    });
    return c.json(
      {
        object: "assessment_breakdown" as const,
        livemode: c.var.tenant.livemode,
        ...window,
        ...(query.agent === undefined ? {} : { agent: query.agent }),
        ...body,
      },
      200,
    );
  });
}
