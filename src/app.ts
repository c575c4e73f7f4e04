import { OpenAPIHono } from "@hono/zod-openapi";
import { ApiError } from "./errors";
import { bodyLimit } from "./http/body-limit";
import type { AppEnv } from "./http/context";
import { issueDetails, onError, onNotFound } from "./http/errors";
import { serveOpenApiDocument } from "./http/openapi-document";
import { publicRateLimit } from "./http/rate-limit";
import { newId } from "./lib/ids";
import { registerActionDecisions } from "./routes/action-decisions";
import { registerActionGrants } from "./routes/action-grants";
import { registerActionMandates } from "./routes/action-mandates";
import { registerActionMandatesDecisions } from "./routes/action-mandates-decisions";
import { registerAgents } from "./routes/agents";
import { registerAgentsCardStatus } from "./routes/agents-card-status";
import { registerAgentsKeys } from "./routes/agents-keys";
import { registerAgentsVerifyCard } from "./routes/agents-verify-card";
import { registerApiKeys } from "./routes/api-keys";
import { registerArtifacts } from "./routes/artifacts";
import { registerAssess } from "./routes/assess";
import { registerAssessments } from "./routes/assessments";
import { registerAssessmentsArtifacts } from "./routes/assessments-artifacts";
import { registerAssessmentsBreakdown } from "./routes/assessments-breakdown";
import { registerAssessmentsEvidence } from "./routes/assessments-evidence";
import { registerAssessmentsFeedback } from "./routes/assessments-feedback";
import { registerAssessmentsReceipts } from "./routes/assessments-receipts";
import { registerAssessmentsSummary } from "./routes/assessments-summary";
import { registerAudit } from "./routes/audit";
import { registerAuditExport } from "./routes/audit-export";
import { registerAuditVerify } from "./routes/audit-verify";
import { registerBilling } from "./routes/billing";
import { registerBillingWebhooks } from "./routes/billing-webhooks";
import { registerConsoleAuth } from "./routes/console-auth";
import { registerControlCoverage } from "./routes/control-coverage";
import { registerCredentialIssuers } from "./routes/credential-issuers";
import { registerEvalSets } from "./routes/eval-sets";
import { registerEvals } from "./routes/evals";
import { registerHealth } from "./routes/health";
import { registerHistory } from "./routes/history";
import { registerJwks } from "./routes/jwks";
import { registerMandateBudgets } from "./routes/mandate-budgets";
import { registerMandates } from "./routes/mandates";
import { registerMe } from "./routes/me";
import { registerNetworkSettings } from "./routes/network-settings";
import { registerOrgs } from "./routes/orgs";
import { registerPolicies } from "./routes/policies";
import { registerPoliciesBacktest } from "./routes/policies-backtest";
import { registerPoliciesShadowReport } from "./routes/policies-shadow-report";
import { registerPrincipals } from "./routes/principals";
import { registerReviewSettings } from "./routes/review-settings";
import { registerReviews } from "./routes/reviews";
import { registerRiskCheck } from "./routes/risk-check";
import { registerRiskModels } from "./routes/risk-models";
import { registerRiskModelsShadowReport } from "./routes/risk-models-shadow-report";
import { registerRoot } from "./routes/root";
import { registerSessions } from "./routes/sessions";
import { registerStatusLists } from "./routes/status-lists";
import { registerTestClocks } from "./routes/test-clocks";
import { registerTransparency } from "./routes/transparency";
import { registerTrustList } from "./routes/trust-list";
import { registerVerifyArtifact } from "./routes/verify-artifact";
import { registerWebhookEndpoints } from "./routes/webhook-endpoints";
import { registerWebhooksDispatch } from "./routes/webhooks-dispatch";
import { RiskPayloadClaims } from "./schemas/risk-payload";
import { WebhookEvent } from "./schemas/webhook-events";

export function buildApp() {
  const app = new OpenAPIHono<AppEnv>({
    defaultHook: (result) => {
      if (!result.success) throw new ApiError("invalid_request", issueDetails(result.error));
    },
  });

  app.use("*", async (c, next) => {
    const requestId = `req_${newId().replaceAll("-", "")}`;
    c.set("requestId", requestId);
    await next();
    c.res.headers.set("x-request-id", requestId);
  });
  app.use("*", bodyLimit);
  // The public routes, limited per client IP; the key set only on a cache miss (src/routes/jwks.ts).
  for (const path of ["/v1/transparency/*", "/v1/trust-list", "/v1/verify/*"]) {
    app.use(path, publicRateLimit);
  }
  app.onError(onError);
  // Read at the first unmatched request, when every route below is registered.
  app.notFound(onNotFound(app.routes));

  const registry = app.openAPIRegistry;
  registry.registerComponent("securitySchemes", "apiKey", {
    type: "apiKey",
    in: "header",
    name: "x-api-key",
    description: "An organization API key (`aar_live_…` or `aar_test_…`)",
  });
  registry.registerComponent("securitySchemes", "bearer", {
    type: "http",
    scheme: "bearer",
    description: "An API key, or a session JWT, as `Authorization: Bearer`",
  });
  registry.registerComponent("securitySchemes", "session", {
    type: "http",
    scheme: "bearer",
    bearerFormat: "JWT",
    description: "A session token from the identity provider",
  });
  // What the service signs rather than answers: no route's body, so named here for clients to
  // generate types from (the Risk Payload's claims, a webhook delivery's body).
  registry.register("RiskPayloadClaims", RiskPayloadClaims);
  registry.register("WebhookEvent", WebhookEvent);

  registerRoot(app);
  registerHealth(app);
  registerJwks(app);
  registerRiskCheck(app);
  registerMe(app);
  registerOrgs(app);
  registerApiKeys(app);
  // Fixed paths before `/v1/audit/{id}/proof`, so "verify" and "export" are never taken for ids.
  registerAuditVerify(app);
  registerAuditExport(app);
  registerAudit(app);
  registerTransparency(app);
  registerArtifacts(app);
  registerVerifyArtifact(app);
  registerTrustList(app);
  registerStatusLists(app);
  registerWebhookEndpoints(app);
  registerWebhooksDispatch(app);
  registerAssess(app);
  registerAssessmentsSummary(app); // before the read by id: see the function
  registerAssessmentsBreakdown(app); // the same
  registerAssessments(app);
  registerAssessmentsArtifacts(app);
  registerReviews(app);
  registerReviewSettings(app);
  registerAssessmentsFeedback(app);
  registerAssessmentsEvidence(app);
  registerAssessmentsReceipts(app);
  registerMandates(app);
  registerMandateBudgets(app);
  registerPolicies(app);
  registerPoliciesBacktest(app);
  registerPoliciesShadowReport(app);
  registerRiskModels(app);
  registerRiskModelsShadowReport(app);
  registerEvalSets(app);
  registerEvals(app);
  registerHistory(app);
  registerNetworkSettings(app);
  registerPrincipals(app);
  // verify-card before /v1/agents/{id}: a literal path segment must win over the parameter.
  registerAgentsVerifyCard(app);
  registerAgentsCardStatus(app);
  registerAgents(app);
  registerAgentsKeys(app);
  registerCredentialIssuers(app);
  registerActionMandates(app);
  registerActionMandatesDecisions(app);
  registerActionDecisions(app);
  registerActionGrants(app);
  registerControlCoverage(app);
  registerBilling(app);
  registerBillingWebhooks(app);
  registerSessions(app);
  registerTestClocks(app);
  // The console's sign-in: browser navigations, not API operations (docs/console.md).
  registerConsoleAuth(app);

  serveOpenApiDocument(app);
  return app;
}
