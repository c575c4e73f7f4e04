import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../http/context";
import { guarded } from "../http/route";
import { errorResponses, IdParam, json, rowId } from "../http/schemas";
import { assessmentEvidence } from "../reviews/evidence";
import { AssessmentEvidence } from "../schemas/evidence";

const read = createRoute(
  guarded("assess:read", {
    method: "get",
    path: "/v1/assessments/{id}/evidence",
    tags: ["Assessments"],
    summary: "What a reviewer weighs: the agent's recent payments and the payee's labels",
    description:
      "From the org's payment history in the caller's mode (assessments and imported records): " +
      "the agent's latest payments up to this one (at most 30, oldest first, this one marked " +
      "`current`), how many earlier payments the agent made to this payee, and the labels " +
      'known now on the org\'s payments to the payee (docs/reviews.md, "Evidence").',
    request: { params: IdParam },
    responses: {
      200: json(AssessmentEvidence, "The assessment's evidence"),
      ...errorResponses(401, 403, 404, 503),
    },
  }),
);

export function registerAssessmentsEvidence(app: OpenAPIHono<AppEnv>) {
  app.openapi(read, async (c) => {
    const id = rowId(c.req.valid("param").id);
    return c.json(await assessmentEvidence(c.var.tenant, id), 200);
  });
}
