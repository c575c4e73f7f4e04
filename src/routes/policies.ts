import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { CreatePolicy, ListPoliciesQuery, Policy } from "../assess/policy-schemas";
import type { AppEnv } from "../http/context";
import { guarded } from "../http/route";
import { errorResponses, IdParam, json, jsonBody, rowId } from "../http/schemas";
import {
  activatePolicy,
  createPolicy,
  getPolicy,
  listPolicies,
  shadowPolicy,
  unshadowPolicy,
} from "../policies/policies";
import { listOf } from "../schemas/common";

const tags = ["Policies"];

const create = createRoute(
  guarded(
    "policy:write",
    {
      method: "post",
      path: "/v1/policies",
      tags,
      summary: "Create a policy: a draft, or the org's active policy with `activate: true`",
      request: { body: jsonBody(CreatePolicy) },
      responses: {
        201: json(Policy, "The policy"),
        ...errorResponses(400, 401, 403, 409, 503),
      },
    },
    { liveOnly: true },
  ),
);

const list = createRoute(
  guarded("policy:read", {
    method: "get",
    path: "/v1/policies",
    tags,
    summary: "List policies, newest first",
    request: { query: ListPoliciesQuery },
    responses: {
      200: json(listOf(Policy, "PolicyList"), "A page of policies"),
      ...errorResponses(400, 401, 403, 503),
    },
  }),
);

const get = createRoute(
  guarded("policy:read", {
    method: "get",
    path: "/v1/policies/{id}",
    tags,
    summary: "Retrieve a policy",
    request: { params: IdParam },
    responses: { 200: json(Policy, "The policy"), ...errorResponses(401, 403, 404, 503) },
  }),
);

const activate = createRoute(
  guarded(
    "policy:write",
    {
      method: "post",
      path: "/v1/policies/{id}/activate",
      tags,
      summary: "Make a policy the org's one active policy",
      description:
        "The previously active policy returns to `draft`. The policy gets the next " +
        "`policy_version`. Activating the active policy changes nothing and answers 200.",
      request: { params: IdParam },
      responses: {
        200: json(Policy, "The active policy"),
        ...errorResponses(401, 403, 404, 409, 503),
      },
    },
    { liveOnly: true },
  ),
);

const shadow = createRoute(
  guarded(
    "policy:write",
    {
      method: "post",
      path: "/v1/policies/{id}/shadow",
      tags,
      summary: "Make a draft the org's one shadow policy",
      description:
        "The policy stays a `draft` with `shadow: true` and is evaluated on every assessment " +
        "next to the active policy, never acted on. A previous shadow policy stops shadowing. " +
        "Shadowing the shadow policy changes nothing and answers 200; the active policy " +
        "cannot be shadowed (409 `policy_active`).",
      request: { params: IdParam },
      responses: {
        200: json(Policy, "The shadow policy"),
        ...errorResponses(401, 403, 404, 409, 503),
      },
    },
    { liveOnly: true },
  ),
);

const unshadow = createRoute(
  guarded(
    "policy:write",
    {
      method: "delete",
      path: "/v1/policies/{id}/shadow",
      tags,
      summary: "Stop shadowing with a policy",
      description:
        "The policy stays a draft with `shadow: false`; its recorded shadow verdicts stay. " +
        "A policy that is not shadowing answers 200 unchanged.",
      request: { params: IdParam },
      responses: {
        200: json(Policy, "The policy"),
        ...errorResponses(401, 403, 404, 503),
      },
    },
    { liveOnly: true },
  ),
);

export function registerPolicies(app: OpenAPIHono<AppEnv>) {
  app.openapi(create, async (c) =>
    c.json(await createPolicy(c.var.tenant, c.req.valid("json")), 201),
  );

  app.openapi(list, async (c) =>
    c.json(await listPolicies(c.var.tenant, c.req.valid("query")), 200),
  );

  app.openapi(get, async (c) => {
    return c.json(await getPolicy(c.var.tenant, rowId(c.req.valid("param").id)), 200);
  });

  app.openapi(activate, async (c) => {
    return c.json(await activatePolicy(c.var.tenant, rowId(c.req.valid("param").id)), 200);
  });

  app.openapi(shadow, async (c) => {
    return c.json(await shadowPolicy(c.var.tenant, rowId(c.req.valid("param").id)), 200);
  });

  app.openapi(unshadow, async (c) => {
    return c.json(await unshadowPolicy(c.var.tenant, rowId(c.req.valid("param").id)), 200);
  });
}
