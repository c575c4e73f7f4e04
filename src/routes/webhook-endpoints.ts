import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../http/context";
import { guarded } from "../http/route";
import { errorResponses, IdParam, json, jsonBody, rowId } from "../http/schemas";
import { listOf, PageQuery } from "../schemas/common";
import {
  CreatedWebhookEndpoint,
  CreateWebhookEndpoint,
  DeletedWebhookEndpoint,
  ListDeliveriesQuery,
  RotateWebhookSecret,
  webhookTags as tags,
  WebhookDelivery,
  WebhookEndpoint,
} from "../schemas/webhooks";
import { listDeliveries } from "../webhooks/delivery-history";
import {
  createEndpoint,
  deleteEndpoint,
  listEndpoints,
  rotateSecret,
  toEndpoint,
} from "../webhooks/endpoints";

const create = createRoute(
  guarded("webhooks:write", {
    method: "post",
    path: "/v1/webhook-endpoints",
    tags,
    summary: "Subscribe a URL to events",
    description:
      "The endpoint receives the events of the caller's mode (a test key makes a test " +
      "endpoint). The URL must be https on a public host. The answer carries the endpoint's " +
      "Standard Webhooks signing secret, shown this once.",
    request: { body: jsonBody(CreateWebhookEndpoint) },
    responses: {
      201: json(CreatedWebhookEndpoint, "The endpoint, with its secret"),
      ...errorResponses(400, 401, 403, 503),
    },
  }),
);

const list = createRoute(
  guarded("webhooks:read", {
    method: "get",
    path: "/v1/webhook-endpoints",
    tags,
    summary: "List webhook endpoints of the caller's mode, newest first",
    request: { query: PageQuery },
    responses: {
      200: json(listOf(WebhookEndpoint, "WebhookEndpointList"), "A page of endpoints"),
      ...errorResponses(400, 401, 403, 503),
    },
  }),
);

const remove = createRoute(
  guarded("webhooks:write", {
    method: "delete",
    path: "/v1/webhook-endpoints/{id}",
    tags,
    summary: "Delete an endpoint: its pending deliveries are cancelled, its records kept",
    request: { params: IdParam },
    responses: {
      200: json(DeletedWebhookEndpoint, "Deleted"),
      ...errorResponses(401, 403, 404, 503),
    },
  }),
);

const rotate = createRoute(
  guarded("webhooks:write", {
    method: "post",
    path: "/v1/webhook-endpoints/{id}/rotate-secret",
    tags,
    summary: "Replace the endpoint's signing secret, the old one still signing for a while",
    description:
      "The answer carries the new secret, shown this once. Until `previous_secret_expires_at` " +
      "(`expires_in` seconds, default a day) each delivery carries a signature by each secret.",
    request: {
      params: IdParam,
      body: { required: false, content: { "application/json": { schema: RotateWebhookSecret } } },
    },
    responses: {
      200: json(CreatedWebhookEndpoint, "The endpoint, with its new secret"),
      ...errorResponses(400, 401, 403, 404, 503),
    },
  }),
);

const deliveries = createRoute(
  guarded("webhooks:read", {
    method: "get",
    path: "/v1/webhook-endpoints/{id}/deliveries",
    tags,
    summary: "The endpoint's deliveries, newest first, each with every attempt",
    request: { params: IdParam, query: ListDeliveriesQuery },
    responses: {
      200: json(listOf(WebhookDelivery, "WebhookDeliveryList"), "A page of deliveries"),
      ...errorResponses(400, 401, 403, 404, 503),
    },
  }),
);

export function registerWebhookEndpoints(app: OpenAPIHono<AppEnv>) {
  app.openapi(create, async (c) => {
    const { row, secret } = await createEndpoint(c.var.tenant, c.req.valid("json"));
    return c.json({ ...toEndpoint(row), secret }, 201);
  });

  app.openapi(rotate, async (c) => {
    const id = rowId(c.req.valid("param").id);
    // The body is optional: absent, the default overlap.
    const { expires_in } = RotateWebhookSecret.parse(c.req.valid("json") ?? {});
    const { row, secret } = await rotateSecret(c.var.tenant, id, expires_in);
    return c.json({ ...toEndpoint(row), secret }, 200);
  });

  app.openapi(list, async (c) => {
    const { limit, cursor } = c.req.valid("query");
    return c.json(await listEndpoints(c.var.tenant, { limit, cursor }), 200);
  });

  app.openapi(remove, async (c) => {
    const id = rowId(c.req.valid("param").id);
    await deleteEndpoint(c.var.tenant, id);
    return c.json({ object: "webhook_endpoint" as const, id, deleted: true as const }, 200);
  });

  app.openapi(deliveries, async (c) => {
    const id = rowId(c.req.valid("param").id);
    return c.json(await listDeliveries(c.var.tenant, id, c.req.valid("query")), 200);
  });
}
