import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../http/context";
import { guarded } from "../http/route";
import { errorResponses, IdParam, json, jsonBody, rowId } from "../http/schemas";
import {
  CreateEvalSet,
  DeletedEvalSet as Deleted,
  EvalSet,
  EvalSetSummary,
} from "../policies/eval-set-schemas";
import { createEvalSet, deleteEvalSet, getEvalSet, listEvalSets } from "../policies/eval-sets";
import { listOf, PageQuery } from "../schemas/common";

const tags = ["Evaluations"];

const create = createRoute(
  guarded(
    "policy:write",
    {
      method: "post",
      path: "/v1/eval-sets",
      tags,
      summary: "Create an evaluation set: labeled cases to score policies against",
      description:
        "Each case's request is validated as `POST /v1/assess` validates it; a fault is a 400 " +
        "naming `cases.<i>.request.<path>`. With `from_history` the cases are the labeled " +
        "assessments of the range; none is a 422 `no_labeled_history`.",
      request: { body: jsonBody(CreateEvalSet) },
      responses: { 201: json(EvalSet, "The set"), ...errorResponses(400, 401, 403, 422, 503) },
    },
    { liveOnly: true },
  ),
);

const list = createRoute(
  guarded("policy:read", {
    method: "get",
    path: "/v1/eval-sets",
    tags,
    summary: "List evaluation sets, newest first (without their cases)",
    request: { query: PageQuery },
    responses: {
      200: json(listOf(EvalSetSummary, "EvalSetList"), "A page of sets"),
      ...errorResponses(400, 401, 403, 503),
    },
  }),
);

const get = createRoute(
  guarded("policy:read", {
    method: "get",
    path: "/v1/eval-sets/{id}",
    tags,
    summary: "Retrieve an evaluation set with its cases",
    request: { params: IdParam },
    responses: { 200: json(EvalSet, "The set"), ...errorResponses(401, 403, 404, 503) },
  }),
);

const remove = createRoute(
  guarded(
    "policy:write",
    {
      method: "delete",
      path: "/v1/eval-sets/{id}",
      tags,
      summary: "Delete an evaluation set (its evaluations remain)",
      request: { params: IdParam },
      responses: { 200: json(Deleted, "Deleted"), ...errorResponses(401, 403, 404, 503) },
    },
    { liveOnly: true },
  ),
);

export function registerEvalSets(app: OpenAPIHono<AppEnv>) {
  app.openapi(create, async (c) => {
    return c.json(await createEvalSet(c.var.tenant, c.req.valid("json")), 201);
  });

  app.openapi(list, async (c) => {
    return c.json(await listEvalSets(c.var.tenant, c.req.valid("query")), 200);
  });

  app.openapi(get, async (c) => {
    const id = rowId(c.req.valid("param").id);
    return c.json(await getEvalSet(c.var.tenant, id), 200);
  });

  app.openapi(remove, async (c) => {
    const id = rowId(c.req.valid("param").id);
    await deleteEvalSet(c.var.tenant, id);
    return c.json({ object: "eval_set" as const, id, deleted: true as const }, 200);
  });
}
