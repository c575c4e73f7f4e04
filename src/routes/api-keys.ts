import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { API_KEY_MODES } from "../auth/api-key";
import { SCOPES, type Scope, SESSION_ONLY_SCOPES, scopeSchema } from "../auth/scopes";
import { ApiError } from "../errors";
import type { AppEnv } from "../http/context";
import { guarded } from "../http/route";
import { errorResponses, IdParam, json, jsonBody } from "../http/schemas";
import { isUuid } from "../lib/ids";
import { createApiKey, listApiKeys, revokeApiKey } from "../orgs/api-keys";
import { listOf, PageQuery, plainText } from "../schemas/common";

const CreateApiKey = z
  .object({
    name: plainText(100),
    scopes: z
      .array(z.string())
      .min(1)
      .openapi({ example: ["assess:write", "assess:read"] }),
    mode: z.enum(API_KEY_MODES).default("live"),
  })
  .strict()
  .openapi("CreateApiKeyRequest");

const ApiKey = z
  .object({
    object: z.literal("api_key"),
    id: z.string(),
    name: z.string(),
    prefix: z.string().openapi({ description: "The first characters of the key, not a secret" }),
    mode: z.enum(API_KEY_MODES),
    scopes: z.array(scopeSchema),
    status: z.enum(["active", "revoked"]),
    created: z.string(),
    revoked_at: z.string().nullable(),
    created_by: z.string().nullable(),
  })
  .openapi("ApiKey");

const CreatedApiKey = ApiKey.extend({
  key: z.string().openapi({ description: "The plaintext key. Returned once; store it now." }),
}).openapi("CreatedApiKey");

const tags = ["API keys"];

const create = createRoute(
  guarded(
    "keys:write",
    {
      method: "post",
      path: "/v1/api-keys",
      tags,
      summary: "Create an API key",
      request: { body: jsonBody(CreateApiKey) },
      responses: {
        201: json(CreatedApiKey, "The key, with its plaintext shown this once"),
        ...errorResponses(400, 401, 403, 503),
      },
    },
    { sessionOnly: true },
  ),
);

const list = createRoute(
  guarded(
    "keys:read",
    {
      method: "get",
      path: "/v1/api-keys",
      tags,
      summary: "List API keys (metadata only, never the secret)",
      request: { query: PageQuery },
      responses: {
        200: json(listOf(ApiKey, "ApiKeyList"), "Newest first"),
        ...errorResponses(400, 401, 403, 503),
      },
    },
    { sessionOnly: true },
  ),
);

const revoke = createRoute(
  guarded(
    "keys:write",
    {
      method: "post",
      path: "/v1/api-keys/{id}/revoke",
      tags,
      summary: "Revoke an API key; it fails from the very next request",
      description: "Revoking a revoked key answers 200 with the unchanged record.",
      request: { params: IdParam },
      responses: { 200: json(ApiKey, "The revoked key"), ...errorResponses(401, 403, 404, 503) },
    },
    { sessionOnly: true },
  ),
);

/** Unknown scopes and session-only scopes are refused with each offender named. */
function checkScopes(requested: string[]): Scope[] {
  const problems = requested.flatMap((scope, i) => {
    if (!(SCOPES as readonly string[]).includes(scope)) {
      return [{ path: `scopes.${i}`, message: `unknown scope "${scope}"` }];
    }
    if (SESSION_ONLY_SCOPES.includes(scope as Scope)) {
      return [{ path: `scopes.${i}`, message: `"${scope}" is for sessions only` }];
    }
    return [];
  });
  if (problems.length > 0) throw new ApiError("invalid_scope", problems);
  return [...new Set(requested as Scope[])];
}

export function registerApiKeys(app: OpenAPIHono<AppEnv>) {
  app.openapi(create, async (c) => {
    const body = c.req.valid("json");
    const scopes = checkScopes(body.scopes);
    return c.json(await createApiKey(c.var.tenant, body, scopes), 201);
  });

  app.openapi(list, async (c) =>
    c.json(await listApiKeys(c.var.tenant, c.req.valid("query")), 200),
  );

  app.openapi(revoke, async (c) => {
    const { id } = c.req.valid("param");
    if (!isUuid(id)) throw new ApiError("not_found");
    return c.json(await revokeApiKey(c.var.tenant, id), 200);
  });
}
