import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../http/context";
import { guarded } from "../http/route";
import { errorResponses, IdParam, json, jsonBody, rowId } from "../http/schemas";
import {
  agentTrustHistoryPage,
  createAgent,
  listAgents,
  updateAgent,
} from "../identity/agent-lifecycle";
import { findAgent, toAgent } from "../identity/agents";
import {
  Agent,
  CreateAgent,
  ListAgentsQuery,
  TrustEvent,
  agentTags as tags,
  UpdateAgent,
} from "../schemas/agents";
import { listOf, PageQuery } from "../schemas/common";

const create = createRoute(
  guarded(
    "agents:write",
    {
      method: "post",
      path: "/v1/agents",
      tags,
      summary: "Register an agent representing a principal",
      request: { body: jsonBody(CreateAgent) },
      responses: {
        201: json(Agent, "The agent"),
        ...errorResponses(400, 401, 403, 409, 503),
      },
    },
    { liveOnly: true },
  ),
);

const list = createRoute(
  guarded("agents:read", {
    method: "get",
    path: "/v1/agents",
    tags,
    summary: "List agents, newest first",
    request: { query: ListAgentsQuery },
    responses: {
      200: json(listOf(Agent, "AgentList"), "A page of agents"),
      ...errorResponses(400, 401, 403, 503),
    },
  }),
);

const get = createRoute(
  guarded("agents:read", {
    method: "get",
    path: "/v1/agents/{id}",
    tags,
    summary: "Retrieve an agent",
    request: { params: IdParam },
    responses: { 200: json(Agent, "The agent"), ...errorResponses(401, 403, 404, 503) },
  }),
);

const update = createRoute(
  guarded(
    "agents:write",
    {
      method: "patch",
      path: "/v1/agents/{id}",
      tags,
      summary: "Update an agent: name, description, metadata, status",
      request: { params: IdParam, body: jsonBody(UpdateAgent) },
      responses: {
        200: json(Agent, "The updated agent"),
        ...errorResponses(400, 401, 403, 404, 409, 503),
      },
    },
    { liveOnly: true },
  ),
);

const history = createRoute(
  guarded("agents:read", {
    method: "get",
    path: "/v1/agents/{id}/trust-history",
    tags,
    summary: "The agent's trust-score timeline, newest first",
    request: { params: IdParam, query: PageQuery },
    responses: {
      200: json(listOf(TrustEvent, "TrustEventList"), "A page of trust events"),
      ...errorResponses(400, 401, 403, 404, 503),
    },
  }),
);

export function registerAgents(app: OpenAPIHono<AppEnv>) {
  app.openapi(create, async (c) =>
    c.json(await createAgent(c.var.tenant, c.req.valid("json")), 201),
  );

  app.openapi(list, async (c) => c.json(await listAgents(c.var.tenant, c.req.valid("query")), 200));

  app.openapi(get, async (c) => {
    const row = await findAgent(c.var.tenant, rowId(c.req.valid("param").id));
    return c.json(toAgent(row, c.var.tenant.env), 200);
  });

  app.openapi(update, async (c) => {
    const body = c.req.valid("json");
    const id = rowId(c.req.valid("param").id);
    return c.json(await updateAgent(c.var.tenant, id, body), 200);
  });

  app.openapi(history, async (c) => {
    const id = rowId(c.req.valid("param").id);
    return c.json(await agentTrustHistoryPage(c.var.tenant, id, c.req.valid("query")), 200);
  });
}
