import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { ApiError } from "../errors";
import type { AppEnv } from "../http/context";
import { guarded } from "../http/route";
import { errorResponses, IdParam, json, rowId } from "../http/schemas";
import { modelShadowReport } from "../risk-models/shadow-report";
import { RiskModelShadowReport } from "../schemas/risk-models";
import { reportWindow, ShadowReportQuery } from "../schemas/shadow";

const route = createRoute(
  guarded("policy:read", {
    method: "get",
    path: "/v1/risk-models/{id}/shadow-report",
    tags: ["Risk models"],
    summary: "What a shadow model would have decided, against what was decided and learned",
    description:
      "Over the window's assessments of the key's mode that this model shadowed: counts by " +
      "(actual decision × model decision), the assessments by label known now, and what the " +
      "model and the actual decisions would have caught at review and deny " +
      "(docs/risk-model.md, Shadowing).",
    request: { params: IdParam, query: ShadowReportQuery },
    responses: {
      200: json(RiskModelShadowReport, "The shadow report"),
      ...errorResponses(400, 401, 403, 404, 503),
    },
  }),
);

export function registerRiskModelsShadowReport(app: OpenAPIHono<AppEnv>) {
  app.openapi(route, async (c) => {
    const id = rowId(c.req.valid("param").id);
    const query = c.req.valid("query");
    const window = reportWindow(query, Date.now());
    const report = await modelShadowReport(c.var.tenant, {
      modelId: id,
      ...window,
      samples: query.samples,
    });
    if (!report) throw new ApiError("not_found");
    return c.json(
      {
        object: "risk_model_shadow_report" as const,
        model: report.model,
        livemode: c.var.tenant.livemode,
        ...window,
        ...report.body,
      },
      200,
    );
  });
}
