import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../http/context";
import { guarded } from "../http/route";
import { errorResponses, IdParam, json, jsonBody, rowId } from "../http/schemas";
import { Eval, EvalSummary, ListEvalsQuery, RunEval } from "../policies/eval-schemas";
import { getEval, listEvals, runEval } from "../policies/evals";
import { listOf } from "../schemas/common";

const tags = ["Evaluations"];

const run = createRoute(
  guarded(
    "policy:write",
    {
      method: "post",
      path: "/v1/evals/run",
      tags,
      summary: "Score a policy (draft or active) against an evaluation set and store the result",
      request: { body: jsonBody(RunEval) },
      responses: { 201: json(Eval, "The evaluation"), ...errorResponses(400, 401, 403, 404, 503) },
    },
    { liveOnly: true, rateLimit: "expensive" },
  ),
);

const list = createRoute(
  guarded("policy:read", {
    method: "get",
    path: "/v1/evals",
    tags,
    summary: "List evaluations, newest first (without their rules and misclassified cases)",
    request: { query: ListEvalsQuery },
    responses: {
      200: json(listOf(EvalSummary, "EvalList"), "A page of evaluations"),
      ...errorResponses(400, 401, 403, 503),
    },
  }),
);

const get = createRoute(
  guarded("policy:read", {
    method: "get",
    path: "/v1/evals/{id}",
    tags,
    summary: "Retrieve an evaluation",
    request: { params: IdParam },
    responses: { 200: json(Eval, "The evaluation"), ...errorResponses(401, 403, 404, 503) },
  }),
);

export function registerEvals(app: OpenAPIHono<AppEnv>) {
  app.openapi(run, async (c) => c.json(await runEval(c.var.tenant, c.req.valid("json")), 201));

  app.openapi(list, async (c) => c.json(await listEvals(c.var.tenant, c.req.valid("query")), 200));

  app.openapi(get, async (c) => {
    const id = rowId(c.req.valid("param").id);
    return c.json(await getEval(c.var.tenant, id), 200);
  });
}
