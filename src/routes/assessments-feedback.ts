import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { addFeedback, listFeedback, toFeedback } from "../feedback/feedback";
import type { AppEnv } from "../http/context";
import { guarded } from "../http/route";
import { errorResponses, IdParam, json, jsonBody, rowId } from "../http/schemas";
import {
  AssessmentFeedback,
  AssessmentFeedbackList,
  CreateFeedback,
  IdempotencyHeader,
} from "../schemas/feedback";

const tags = ["Assessments"];

const createFeedback = createRoute(
  guarded("assess:write", {
    method: "post",
    path: "/v1/assessments/{id}/feedback",
    tags,
    summary: "Label an assessment with what happened afterwards (docs/feedback.md)",
    request: { params: IdParam, headers: IdempotencyHeader, body: jsonBody(CreateFeedback) },
    responses: {
      201: json(AssessmentFeedback, "The label, recorded and audited"),
      200: json(AssessmentFeedback, "A retry with the same Idempotency-Key: the first label"),
      ...errorResponses(400, 401, 403, 404, 409, 503),
    },
  }),
);

const listAssessmentFeedback = createRoute(
  guarded("assess:read", {
    method: "get",
    path: "/v1/assessments/{id}/feedback",
    tags,
    summary: "An assessment's labels, oldest first, and its effective label",
    request: { params: IdParam },
    responses: {
      200: json(AssessmentFeedbackList, "Every label of the assessment"),
      ...errorResponses(401, 403, 404, 503),
    },
  }),
);

export function registerAssessmentsFeedback(app: OpenAPIHono<AppEnv>) {
  app.openapi(createFeedback, async (c) => {
    const id = rowId(c.req.valid("param").id);
    const key = c.req.valid("header")["idempotency-key"];
    const { row, created } = await addFeedback(c.var.tenant, id, c.req.valid("json"), key);
    return created ? c.json(toFeedback(row), 201) : c.json(toFeedback(row), 200);
  });

  app.openapi(listAssessmentFeedback, async (c) => {
    const id = rowId(c.req.valid("param").id);
    return c.json(await listFeedback(c.var.tenant, id), 200);
  });
}
