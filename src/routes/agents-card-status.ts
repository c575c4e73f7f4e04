import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../http/context";
import { guarded } from "../http/route";
import { errorResponses, IdParam, json, rowId } from "../http/schemas";
import { findAgent, toCardStatus } from "../identity/agents";
import { CardStatus, agentTags as tags } from "../schemas/agents";

const status = createRoute(
  guarded("agents:read", {
    method: "get",
    path: "/v1/agents/{id}/card-status",
    tags,
    summary: "The agent's A2A Agent Card verification status",
    request: { params: IdParam },
    responses: {
      200: json(CardStatus, "`verified`, `unverified` or `invalid`, with reasons"),
      ...errorResponses(401, 403, 404, 503),
    },
  }),
);

export function registerAgentsCardStatus(app: OpenAPIHono<AppEnv>) {
  app.openapi(status, async (c) => {
    return c.json(toCardStatus(await findAgent(c.var.tenant, rowId(c.req.valid("param").id))), 200);
  });
}
