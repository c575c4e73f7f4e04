import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { withRiskPayload } from "../assess/facts";
import { Outcome } from "../assess/outcome";
import { runAssessment } from "../assess/pipeline";
import { signedArtifacts } from "../assess/rails/artifacts";
import { openedRefinement } from "../assess/refinement";
import { AssessRequest, EXAMPLE_MANDATE, parseAssessRequest } from "../assess/request";
import { MANDATE_ASSURANCE } from "../assess/risk-model";
import { signal } from "../assess/signals";
import { ApiError } from "../errors";
import type { AppEnv } from "../http/context";
import { guarded } from "../http/route";
import { errorResponses, json, jsonBody } from "../http/schemas";
import { Artifacts } from "../schemas/rails";
import { DECISIONS } from "../schemas/vocabulary";

const AssessResponse = z
  .object({
    decision: z.enum(DECISIONS),
    score: z.number().int().min(0).max(100),
    assessmentId: z.string(),
    mandateId: z.string(),
    riskPayloadJws: z.string().openapi({
      description:
        "The signed Risk Payload: a compact JWS (EdDSA, `typ` `risk-payload+jwt`) whose " +
        "payload is a `RiskPayloadClaims`; verify it against `/.well-known/jwks.json`",
    }),
    mandate: z.record(z.string(), z.unknown()).openapi({
      description: 'The submitted mandate with the Risk Payload in `risk_data["agent-risk"]`',
    }),
    mandate_receipt: z
      .string()
      .nullable()
      .openapi({
        description:
          "The AP2 v0.2 Mandate Receipt of a presented `credential` (compact JWS, ES256; " +
          "`outcome.mandate_receipt`, docs/credentials.md): what an AP2 Verifier returns the " +
          "agent. The same bytes on every replay; null without a credential",
      }),
    outcome: Outcome,
    idempotency_key: z.string().nullable().openapi({ description: "Echoed from the request" }),
    artifacts: Artifacts.optional().openapi({
      description: "Present only when the request named `artifacts`: each one it named",
    }),
  })
  .openapi("AssessResponse", { example: assessResponseExample() });

/**
 * The answer to AssessRequest's example: an unknown agent's payment sent as decoded JSON, held
 * for review (so it opens a review item). The JWS is shortened;
 * `test/worker/openapi-responses.test.ts` checks real answers against the schema.
 */
function assessResponseExample() {
  const assessmentId = "0196a3c4-5d6e-7f80-9a1b-2c3d4e5f6a7b";
  const jws = "eyJhbGciOiJFZERTQSIsInR5cCI6InJpc2stcGF5bG9hZCtqd3QifQ.eyJzdWIiOiIuLi4ifQ.c2ln";
  const outcome = {
    object: "assessment" as const,
    id: assessmentId,
    created: "2026-01-01T12:00:00.000Z",
    livemode: true,
    kind: "ap2_payment" as const,
    outcome: {
      decision: "review" as const,
      risk_level: "elevated" as const,
      risk_score: 55,
      reason: "Review: the agent could not be identified.",
      policy_version: 1,
    },
    confidences: {
      agent_identity: 0,
      mandate_validity: MANDATE_ASSURANCE.decoded,
      policy_adherence: 1,
      behavioral_risk: 0.5,
      recipient_risk: 0.5,
    },
    signals: [signal("agent_unknown", "high"), signal("unverified", "low")],
    rejection_reasons: [],
    risk_payload: {
      jws,
      kid: "hQ5n0Zq3eX1v2Yb7mWc9tRk4LpS6uJd8aFg0iHe2oTs",
      alg: "EdDSA" as const,
      verify_url: "https://risk.example.com/.well-known/jwks.json",
    },
    audit: {
      entry_id: "0196a3c4-5d6e-7f80-9a1b-2c3d4e5f6a7d",
      sequence: 42,
      status: "pending" as const,
    },
    refinement: openedRefinement("0196a3c4-5d6e-7f80-9a1b-2c3d4e5f6a7e"),
    agent: null,
    credential: null,
    mandate_receipt: null,
    latency_ms: 18,
  };
  return {
    decision: "review",
    score: 55,
    assessmentId,
    mandateId: "0196a3c4-5d6e-7f80-9a1b-2c3d4e5f6a7c",
    riskPayloadJws: jws,
    // Built by the function that builds the real answer's forwarded mandate.
    mandate: withRiskPayload(EXAMPLE_MANDATE, outcome as Outcome),
    mandate_receipt: null,
    outcome,
    idempotency_key: "order-1042",
  };
}

/**
 * What the route's own validator checks: a JSON object, sent as JSON. The rest is
 * parseAssessRequest's (AssessRequest, then the mandate), so its order (400 before 422) and its
 * details have one home; the document shows AssessRequest (see registerAssess).
 */
const JsonObject = z.record(z.string(), z.unknown());

const assess = createRoute(
  guarded(
    "assess:write",
    {
      method: "post",
      path: "/v1/assess",
      tags: ["Assessments"],
      summary: "Assess an agent action: a decision, a score and a signed Risk Payload",
      description:
        "Idempotent by the mandate's canonical content: the same mandate again answers the same " +
        "assessment. Response headers `Server-Timing` and `x-service-server-timing` carry the " +
        "stages `context`, `kya`, `policy`, `risk`, `sign`, `persist`.",
      request: {
        body: jsonBody(JsonObject),
        headers: z.object({
          "a2a-version": z.string().optional().openapi({ description: "`0.3` or `1.0`" }),
        }),
      },
      responses: {
        200: json(AssessResponse, "The assessment"),
        ...errorResponses(400, 401, 402, 403, 422, 500, 503),
      },
    },
    { rateLimit: "assess" },
  ),
);

/**
 * The route as the document shows it: the same route, its body the AssessRequest schema that
 * parseAssessRequest applies, not the route validator's bare object check.
 */
const { middleware: _validatedBody, ...assessRoute } = assess;
const assessDocumented = {
  ...assessRoute,
  request: { ...assessRoute.request, body: jsonBody(AssessRequest) },
};

export function registerAssess(app: OpenAPIHono<AppEnv>) {
  app.openAPIRegistry.registerPath(assessDocumented);
  app.openapi({ ...assess, hide: true }, async (c) => {
    const receivedAt = Date.now();
    // The body as sent (the validator above checked it is an object), not a parsed copy.
    const body: unknown = await c.req.json().catch(() => {
      throw new ApiError("invalid_json");
    });
    const request = parseAssessRequest(body, c.req.header("a2a-version") ?? null);
    const { outcome, record, mandate, timing } = await runAssessment(
      c.var.tenant,
      request,
      receivedAt,
    );
    // Derived from the stored outcome and signed after the commit (docs/rails.md).
    const artifacts = request.artifacts?.length
      ? await timing.time("sign", () => signedArtifacts(c.env, outcome, request.artifacts ?? []))
      : null;
    const serverTiming = timing.header();
    c.header("Server-Timing", serverTiming);
    c.header("x-service-server-timing", serverTiming);
    return c.json(
      {
        decision: outcome.outcome.decision,
        score: outcome.outcome.risk_score,
        assessmentId: outcome.id,
        mandateId: record.mandate_id,
        riskPayloadJws: outcome.risk_payload.jws,
        mandate,
        mandate_receipt: outcome.mandate_receipt,
        outcome,
        idempotency_key: request.idempotencyKey,
        ...(artifacts === null ? {} : { artifacts }),
      },
      200,
    );
  });
}
