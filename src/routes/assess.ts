import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { Outcome } from "../assess/outcome";
import { runAssessment } from "../assess/pipeline";
import { AssessRequest, parseAssessRequest } from "../assess/request";
import { ApiError } from "../errors";
import type { AppEnv } from "../http/context";
import { guarded } from "../http/route";
import { errorResponses, json, jsonBody } from "../http/schemas";

const AssessResponse = z
  .object({
    decision: z.enum(["approve", "review", "deny"]),
    score: z.number().int().min(0).max(100),
    assessmentId: z.string(),
    mandateId: z.string(),
    riskPayloadJws: z.string(),
    mandate: z.record(z.string(), z.unknown()).openapi({
      description: 'The submitted mandate with the Risk Payload in `risk_data["agent-risk"]`',
    }),
    outcome: Outcome,
    idempotency_key: z.string().nullable().openapi({ description: "Echoed from the request" }),
  })
  .openapi("AssessResponse");

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
        outcome,
        idempotency_key: request.idempotencyKey,
      },
      200,
    );
  });
}
