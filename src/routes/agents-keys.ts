import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import type { AppEnv } from "../http/context";
import { guarded } from "../http/route";
import { errorResponses, json, jsonBody, rowId } from "../http/schemas";
import { AgentKey, listAgentKeys, registerAgentKey, revokeAgentKey } from "../identity/agent-keys";
import { parsePublicJwk } from "../identity/public-jwk";
import { agentTags as tags } from "../schemas/agents";
import { listOf, PageQuery } from "../schemas/common";

const RegisterKey = z
  .object({
    jwk: z.record(z.string(), z.unknown()).openapi({
      description: "A public JWK: OKP Ed25519, EC P-256, or RSA of at least 2048 bits",
      example: { kty: "OKP", crv: "Ed25519", x: "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo" },
    }),
  })
  .strict()
  .openapi("RegisterAgentKeyRequest");

const AgentParam = z.object({
  id: z.string().openapi({ param: { name: "id", in: "path" } }),
});
const KeyParam = AgentParam.extend({
  keyId: z.string().openapi({ param: { name: "keyId", in: "path" } }),
});

const register = createRoute(
  guarded(
    "agents:write",
    {
      method: "post",
      path: "/v1/agents/{id}/keys",
      tags,
      summary: "Register a public key for an agent",
      description:
        "The key is validated by importing it; private key material is refused. Registering a " +
        "key the agent already holds answers 200 with the existing record (201 when new).",
      request: { params: AgentParam, body: jsonBody(RegisterKey) },
      responses: {
        200: json(AgentKey, "The key was already registered for this agent"),
        201: json(AgentKey, "The registered key"),
        ...errorResponses(400, 401, 403, 404, 409, 503),
      },
    },
    { liveOnly: true },
  ),
);

const list = createRoute(
  guarded("agents:read", {
    method: "get",
    path: "/v1/agents/{id}/keys",
    tags,
    summary: "List an agent's keys, newest first (revoked ones included)",
    request: { params: AgentParam, query: PageQuery },
    responses: {
      200: json(listOf(AgentKey, "AgentKeyList"), "A page of keys"),
      ...errorResponses(400, 401, 403, 404, 503),
    },
  }),
);

const revoke = createRoute(
  guarded(
    "agents:write",
    {
      method: "post",
      path: "/v1/agents/{id}/keys/{keyId}/revoke",
      tags,
      summary: "Revoke an agent key; it never verifies anything again",
      description:
        "Revoking a revoked key answers 200 with the unchanged record. A bound Agent Card that " +
        "no other active key of the agent signed becomes `unverified` in the same transaction.",
      request: { params: KeyParam },
      responses: { 200: json(AgentKey, "The revoked key"), ...errorResponses(401, 403, 404, 503) },
    },
    { liveOnly: true },
  ),
);

export function registerAgentsKeys(app: OpenAPIHono<AppEnv>) {
  app.openapi(register, async (c) => {
    const agentId = rowId(c.req.valid("param").id);
    const key = await parsePublicJwk(c.req.valid("json").jwk);
    const { result, created } = await registerAgentKey(c.var.tenant, agentId, key);
    return c.json(result, created ? 201 : 200);
  });

  app.openapi(list, async (c) => {
    const agentId = rowId(c.req.valid("param").id);
    return c.json(await listAgentKeys(c.var.tenant, agentId, c.req.valid("query")), 200);
  });

  app.openapi(revoke, async (c) => {
    const params = c.req.valid("param");
    const agentId = rowId(params.id);
    return c.json(await revokeAgentKey(c.var.tenant, agentId, params.keyId), 200);
  });
}
