import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { incidentPack } from "../action/incident-pack";
import { getDecision } from "../action/mandates";
import type { AppEnv } from "../http/context";
import { guarded } from "../http/route";
import { errorResponses, IdParam, json, rowId } from "../http/schemas";
import { ActionDecision, IncidentPack, actionTags as tags } from "../schemas/actions";

const get = createRoute(
  guarded("assess:read", {
    method: "get",
    path: "/v1/action-decisions/{id}",
    tags,
    summary: "Retrieve an action decision, with where its grant stands",
    request: { params: IdParam },
    responses: { 200: json(ActionDecision, "The decision"), ...errorResponses(401, 403, 404, 503) },
  }),
);

const pack = createRoute(
  guarded("audit:read", {
    method: "get",
    path: "/v1/action-decisions/{id}/incident-pack",
    tags,
    summary: "Every piece of evidence for one decision, signed, verifiable offline",
    description: "How to verify it offline: docs/action-authority.md.",
    request: { params: IdParam },
    responses: {
      200: json(IncidentPack, "The incident pack"),
      ...errorResponses(401, 403, 404, 503),
    },
  }),
);

export function registerActionDecisions(app: OpenAPIHono<AppEnv>) {
  app.openapi(get, async (c) => {
    const id = rowId(c.req.valid("param").id);
    return c.json(await getDecision(c.var.tenant, id), 200);
  });

  app.openapi(pack, async (c) => {
    return c.json(await incidentPack(c.var.tenant, rowId(c.req.valid("param").id)), 200);
  });
}
