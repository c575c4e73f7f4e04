import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../http/context";
import { guarded } from "../http/route";
import { errorResponses, IdParam, json, jsonBody, rowId } from "../http/schemas";
import {
  activateRiskModel,
  createRiskModel,
  getRiskModel,
  listRiskModels,
  riskModelParams,
  shadowRiskModel,
} from "../risk-models/lifecycle";
import { listOf } from "../schemas/common";
import {
  CreateRiskModel,
  ListRiskModelsQuery,
  RiskModel,
  RiskModelParams,
} from "../schemas/risk-models";

// Learned risk models (docs/risk-model.md, "The API: training, activating, shadowing a model").
// A model changes decisions as a policy does, so its writes take `policy:write` and its reads
// `policy:read`. Models are per mode: the key's mode trains, lists and activates its own.

const tags = ["Risk models"];

const create = createRoute(
  guarded(
    "policy:write",
    {
      method: "post",
      path: "/v1/risk-models",
      tags,
      summary: "Train a risk model on the mode's payment history as of an instant",
      description:
        "Answers 202 with the model in `training`; a Queue consumer trains it and it becomes " +
        "`ready` (with its metrics on a held-out later slice) or `failed` (with " +
        "`failure_reason`). Poll GET /v1/risk-models/{id}. `test_clock` (test keys only) trains " +
        "as of the clock's frozen time.",
      request: { body: jsonBody(CreateRiskModel) },
      responses: {
        202: json(RiskModel, "The model, training"),
        ...errorResponses(400, 401, 403, 503),
      },
    },
    // Each call is a training run on the queue: the expensive door, as backtests.
    { rateLimit: "expensive" },
  ),
);

const list = createRoute(
  guarded("policy:read", {
    method: "get",
    path: "/v1/risk-models",
    tags,
    summary: "List the mode's risk models, newest first",
    request: { query: ListRiskModelsQuery },
    responses: {
      200: json(listOf(RiskModel, "RiskModelList"), "A page of risk models"),
      ...errorResponses(400, 401, 403, 503),
    },
  }),
);

const get = createRoute(
  guarded("policy:read", {
    method: "get",
    path: "/v1/risk-models/{id}",
    tags,
    summary: "Retrieve a risk model",
    request: { params: IdParam },
    responses: { 200: json(RiskModel, "The model"), ...errorResponses(401, 403, 404, 503) },
  }),
);

const params = createRoute(
  guarded("policy:read", {
    method: "get",
    path: "/v1/risk-models/{id}/params",
    tags,
    summary: "A trained model's parameters (gradient-boosted trees) and their digest",
    description:
      "The digest is the model card's `params_digest`. A model without parameters (training " +
      "or failed) answers 409 `risk_model_not_trained`.",
    request: { params: IdParam },
    responses: {
      200: json(RiskModelParams, "The parameters"),
      ...errorResponses(401, 403, 404, 409, 503),
    },
  }),
);

const activate = createRoute(
  guarded("policy:write", {
    method: "post",
    path: "/v1/risk-models/{id}/activate",
    tags,
    summary: "Make a trained model the mode's one active model",
    description:
      "From `ready`, `shadow` or `retired`. The active model (if another) becomes `retired`; " +
      "this one gets the org's next `version`. Rolling back is activating an earlier, retired " +
      "model. Activating the active model changes nothing and answers 200; a model in " +
      "`training` or `failed` answers 409 `risk_model_not_trained`.",
    request: { params: IdParam },
    responses: {
      200: json(RiskModel, "The active model"),
      ...errorResponses(401, 403, 404, 409, 503),
    },
  }),
);

const shadow = createRoute(
  guarded("policy:write", {
    method: "post",
    path: "/v1/risk-models/{id}/shadow",
    tags,
    summary: "Make a trained model the mode's one shadow model",
    description:
      "From `ready` or `retired`: scored on every assessment next to the active model, its " +
      "verdict recorded and never acted on. The previous shadow model returns to `ready`. " +
      "The active model cannot be shadowed (409 `risk_model_active`).",
    request: { params: IdParam },
    responses: {
      200: json(RiskModel, "The shadow model"),
      ...errorResponses(401, 403, 404, 409, 503),
    },
  }),
);

export function registerRiskModels(app: OpenAPIHono<AppEnv>) {
  app.openapi(create, async (c) =>
    c.json(await createRiskModel(c.var.tenant, c.req.valid("json")), 202),
  );

  app.openapi(list, async (c) =>
    c.json(await listRiskModels(c.var.tenant, c.req.valid("query")), 200),
  );

  app.openapi(get, async (c) =>
    c.json(await getRiskModel(c.var.tenant, rowId(c.req.valid("param").id)), 200),
  );

  app.openapi(params, async (c) =>
    c.json(await riskModelParams(c.var.tenant, rowId(c.req.valid("param").id)), 200),
  );

  app.openapi(activate, async (c) =>
    c.json(await activateRiskModel(c.var.tenant, rowId(c.req.valid("param").id)), 200),
  );

  app.openapi(shadow, async (c) =>
    c.json(await shadowRiskModel(c.var.tenant, rowId(c.req.valid("param").id)), 200),
  );
}
