import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { getOutcome } from "../assess/assessment-reads";
import { signedArtifacts } from "../assess/rails/artifacts";
import type { AppEnv } from "../http/context";
import { guarded } from "../http/route";
import { errorResponses, IdParam, json, rowId } from "../http/schemas";
import { AcpArtifact, RiskCheckResult } from "../schemas/rails";

/**
 * An assessment's artefacts for other rails, read later (docs/rails.md): an x402 facilitator
 * that settles after the assessment fetches the RiskCheckResult by the assessment's id. One
 * path per rail, each with its own type, as the artefacts `POST /v1/assess` answers.
 */
const tags = ["Assessments"];
const description =
  "Derived from the stored assessment and signed now, with the claims the assessment's own " +
  "answer carried (the Risk Payload's `iat`, `exp`, `aud` and mandate hash): an artefact read " +
  "after its `exp` is still the assessment's, and expired.";

const x402 = createRoute(
  guarded("assess:read", {
    method: "get",
    path: "/v1/assessments/{id}/artifacts/x402",
    tags,
    summary: "An assessment's x402 risk-check result (RiskCheckResult)",
    description,
    request: { params: IdParam },
    responses: {
      200: json(RiskCheckResult, "The RiskCheckResult, as `artifacts.x402` of the assessment"),
      ...errorResponses(401, 403, 404, 503),
    },
  }),
);

const acp = createRoute(
  guarded("assess:read", {
    method: "get",
    path: "/v1/assessments/{id}/artifacts/acp",
    tags,
    summary: "An assessment's ACP delegate-payment risk_signals",
    description,
    request: { params: IdParam },
    responses: {
      200: json(AcpArtifact, "The ACP artefact, as `artifacts.acp` of the assessment"),
      ...errorResponses(401, 403, 404, 503),
    },
  }),
);

export function registerAssessmentsArtifacts(app: OpenAPIHono<AppEnv>) {
  app.openapi(x402, async (c) => {
    const outcome = await getOutcome(c.var.tenant, rowId(c.req.valid("param").id));
    const { x402: result } = await signedArtifacts(c.env, outcome, ["x402"]);
    return c.json(result as RiskCheckResult, 200);
  });
  app.openapi(acp, async (c) => {
    const outcome = await getOutcome(c.var.tenant, rowId(c.req.valid("param").id));
    const { acp: artifact } = await signedArtifacts(c.env, outcome, ["acp"]);
    return c.json(artifact as AcpArtifact, 200);
  });
}
