import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { ApiError } from "../errors";
import type { AppEnv } from "../http/context";
import { guarded } from "../http/route";
import { errorResponses, IdParam, json, rowId } from "../http/schemas";
import { shadowReport } from "../policies/shadow-report";
import { reportWindow, ShadowReport, ShadowReportQuery } from "../schemas/shadow";

const route = createRoute(
  guarded("policy:read", {
    method: "get",
    path: "/v1/policies/{id}/shadow-report",
    tags: ["Policies"],
    summary: "What a shadow policy would have decided, against what was decided and learned",
    description:
      "Over the window's assessments of the key's mode that this policy shadowed: counts by " +
      "(active decision × shadow decision), each disagreement's outcomes by effective label, " +
      "and a sample of disagreements.",
    request: { params: IdParam, query: ShadowReportQuery },
    responses: {
      200: json(ShadowReport, "The shadow report"),
      ...errorResponses(400, 401, 403, 404, 503),
    },
  }),
);

export function registerPoliciesShadowReport(app: OpenAPIHono<AppEnv>) {
  app.openapi(route, async (c) => {
    const id = rowId(c.req.valid("param").id);
    const query = c.req.valid("query");
    const window = reportWindow(query, Date.now());
    const report = await shadowReport(c.var.tenant, {
      policyId: id,
      ...window,
      samples: query.samples,
    });
    if (!report) throw new ApiError("not_found");
    return c.json(
      {
        object: "shadow_report" as const,
        policy: report.policy,
        livemode: c.var.tenant.livemode,
        ...window,
        ...report.body,
      },
      200,
    );
  });
}
