import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { createMandate, getMandate, listMandates, revokeMandate } from "../action/mandates";
import { toMandate } from "../action/records";
import { mapPage } from "../db/pagination";
import type { AppEnv } from "../http/context";
import { guarded } from "../http/route";
import { errorResponses, IdParam, json, jsonBody, rowId } from "../http/schemas";
import { ActionMandate, CreateActionMandate, actionTags as tags } from "../schemas/actions";
import { RowUuid } from "../schemas/agents";
import { listOf, PageQuery } from "../schemas/common";
import { MANDATE_STATUSES } from "../schemas/vocabulary";

const ListMandatesQuery = PageQuery.extend({
  status: z.enum(MANDATE_STATUSES).optional(),
  agent_id: RowUuid.optional(),
});

const create = createRoute(
  guarded(
    "assess:write",
    {
      method: "post",
      path: "/v1/action-mandates",
      tags,
      summary: "Create bounded authority for an agent: an action, a resource, a window, limits",
      request: { body: jsonBody(CreateActionMandate) },
      responses: {
        201: json(ActionMandate, "The mandate"),
        ...errorResponses(400, 401, 403, 409, 503),
      },
    },
    { liveOnly: true },
  ),
);

const list = createRoute(
  guarded("assess:read", {
    method: "get",
    path: "/v1/action-mandates",
    tags,
    summary: "List action mandates, newest first",
    request: { query: ListMandatesQuery },
    responses: {
      200: json(listOf(ActionMandate, "ActionMandateList"), "A page of mandates"),
      ...errorResponses(400, 401, 403, 503),
    },
  }),
);

const get = createRoute(
  guarded("assess:read", {
    method: "get",
    path: "/v1/action-mandates/{id}",
    tags,
    summary: "Retrieve an action mandate, with what it has used",
    request: { params: IdParam },
    responses: { 200: json(ActionMandate, "The mandate"), ...errorResponses(401, 403, 404, 503) },
  }),
);

const revoke = createRoute(
  guarded(
    "assess:write",
    {
      method: "post",
      path: "/v1/action-mandates/{id}/revoke",
      tags,
      summary: "Revoke an action mandate: no more ALLOWs, and its grants no longer redeem",
      description: "Revoking a revoked mandate answers 200 with the unchanged record.",
      request: { params: IdParam },
      responses: {
        200: json(ActionMandate, "The revoked mandate"),
        ...errorResponses(401, 403, 404, 503),
      },
    },
    { liveOnly: true },
  ),
);

export function registerActionMandates(app: OpenAPIHono<AppEnv>) {
  app.openapi(create, async (c) => {
    return c.json(toMandate(await createMandate(c.var.tenant, c.req.valid("json"))), 201);
  });

  app.openapi(list, async (c) => {
    const list = await listMandates(c.var.tenant, c.req.valid("query"));
    return c.json(mapPage(list, toMandate), 200);
  });

  app.openapi(get, async (c) => {
    const id = rowId(c.req.valid("param").id);
    const row = await getMandate(c.var.tenant, id);
    return c.json(toMandate(row), 200);
  });

  app.openapi(revoke, async (c) => {
    const id = rowId(c.req.valid("param").id);
    const row = await revokeMandate(c.var.tenant, id);
    return c.json(toMandate(row), 200);
  });
}
