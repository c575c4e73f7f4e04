import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../http/context";
import { guarded } from "../http/route";
import { errorResponses, IdParam, json, jsonBody, rowId } from "../http/schemas";
import {
  createPrincipal,
  erasePrincipal,
  getPrincipal,
  listPrincipals,
} from "../identity/principals";
import { listOf } from "../schemas/common";
import { CreatePrincipal, ListPrincipalsQuery, Principal } from "../schemas/principals";

const tags = ["Principals"];

const create = createRoute(
  guarded(
    "agents:write",
    {
      method: "post",
      path: "/v1/principals",
      tags,
      summary: "Create a principal (a person or company that agents act for)",
      description: "Personal fields are encrypted at rest with a data key of this principal's own.",
      request: { body: jsonBody(CreatePrincipal) },
      responses: {
        201: json(Principal, "The principal"),
        ...errorResponses(400, 401, 403, 503),
      },
    },
    { liveOnly: true },
  ),
);

const list = createRoute(
  guarded("agents:read", {
    method: "get",
    path: "/v1/principals",
    tags,
    summary: "List principals, newest first",
    request: { query: ListPrincipalsQuery },
    responses: {
      200: json(listOf(Principal, "PrincipalList"), "A page of principals"),
      ...errorResponses(400, 401, 403, 503),
    },
  }),
);

const get = createRoute(
  guarded("agents:read", {
    method: "get",
    path: "/v1/principals/{id}",
    tags,
    summary: "Retrieve a principal",
    request: { params: IdParam },
    responses: { 200: json(Principal, "The principal"), ...errorResponses(401, 403, 404, 503) },
  }),
);

const erase = createRoute(
  guarded(
    "gdpr:erase",
    {
      method: "post",
      path: "/v1/principals/{id}/erase",
      tags,
      summary: "Crypto-erase a principal's personal data",
      description:
        "Destroys the principal's data key, so the stored ciphertext can never be opened again, " +
        "clears its metadata, and erases the personal members of its agents' stored mandates " +
        "(`erased_fields` on the mandate). Erasing an erased principal answers 200 with the " +
        "same record, and erases what its agents' mandates stored since.",
      request: { params: IdParam },
      responses: {
        200: json(Principal, "The erased principal"),
        ...errorResponses(401, 403, 404, 503),
      },
    },
    { liveOnly: true },
  ),
);

export function registerPrincipals(app: OpenAPIHono<AppEnv>) {
  app.openapi(create, async (c) =>
    c.json(await createPrincipal(c.var.tenant, c.req.valid("json")), 201),
  );

  app.openapi(list, async (c) =>
    c.json(await listPrincipals(c.var.tenant, c.req.valid("query")), 200),
  );

  app.openapi(get, async (c) => {
    return c.json(await getPrincipal(c.var.tenant, rowId(c.req.valid("param").id)), 200);
  });

  app.openapi(erase, async (c) => {
    return c.json(await erasePrincipal(c.var.tenant, rowId(c.req.valid("param").id)), 200);
  });
}
