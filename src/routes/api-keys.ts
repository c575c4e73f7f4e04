import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { and, eq, isNull, sql } from "drizzle-orm";
import { API_KEY_MODES, generateApiKey } from "../auth/api-key";
import { SCOPES, type Scope, SESSION_ONLY_SCOPES, scopeSchema } from "../auth/scopes";
import { apiKeys } from "../db/schema";
import { ApiError, orNotFound } from "../errors";
import type { AppEnv } from "../http/context";
import { listById, mapPage } from "../http/pagination";
import { guarded } from "../http/route";
import { errorResponses, IdParam, json, jsonBody } from "../http/schemas";
import { record as recordChange } from "../ledger/ledger";
import { isUuid, newId } from "../lib/ids";
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

type ApiKeyRow = typeof apiKeys.$inferSelect;

function toApiKey(row: ApiKeyRow) {
  return {
    object: "api_key" as const,
    id: row.id,
    name: row.name,
    prefix: row.prefix,
    mode: row.mode,
    scopes: row.scopes as Scope[],
    status: row.revokedAt ? ("revoked" as const) : ("active" as const),
    created: row.createdAt.toISOString(),
    revoked_at: row.revokedAt?.toISOString() ?? null,
    created_by: row.createdByUserId,
  };
}

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
    const who = await c.var.tenant.caller();
    const { key, hash, prefix } = await generateApiKey(body.mode);
    const [rows] = await c.var.tenant.batch((db) => [
      db
        .insert(apiKeys)
        .values({
          id: newId(),
          name: body.name,
          keyHash: hash,
          prefix,
          mode: body.mode,
          scopes,
          createdByUserId: who.actor.type === "user" ? who.actor.id : null,
        })
        .returning(),
    ]);
    const row = rows[0];
    if (!row) throw new ApiError("internal_error");
    const record = toApiKey(row);
    try {
      await recordChange(c.env, who, {
        type: "api_key.created",
        subject: { type: "api_key", id: record.id },
        payload: record,
      });
    } catch (error) {
      // An unaudited key must not stay usable. Its plaintext was never shown, so nobody holds
      // it; revoking it as well (best effort) keeps listings honest.
      await c.var.tenant
        .batch((db) => [
          db.update(apiKeys).set({ revokedAt: sql`now()` }).where(eq(apiKeys.id, record.id)),
        ])
        .catch(() => undefined);
      throw error;
    }
    return c.json({ ...record, key }, 201);
  });

  app.openapi(list, async (c) => {
    const { limit, cursor } = c.req.valid("query");
    const list = await listById(c.var.tenant, apiKeys, { limit, cursor });
    return c.json(mapPage(list, toApiKey), 200);
  });

  app.openapi(revoke, async (c) => {
    const { id } = c.req.valid("param");
    if (!isUuid(id)) throw new ApiError("not_found");
    // One statement revokes an active key or reads a revoked one; `changed` tells which, so a
    // repeated revoke answers the same record and records nothing new.
    // Two statements: the second reads the row as committed after the first, so a revoke that
    // lost a race still answers the revoked key.
    const [, current] = await c.var.tenant.batch((db) => [
      db
        .update(apiKeys)
        .set({ revokedAt: sql`now()` })
        .where(and(eq(apiKeys.id, id), isNull(apiKeys.revokedAt)))
        .returning({ id: apiKeys.id }),
      db.select().from(apiKeys).where(eq(apiKeys.id, id)),
    ]);
    const row = orNotFound(current[0]);
    const record = toApiKey(row);
    // Recorded on every call, once per key: a retry after a failed append still records it.
    await recordChange(c.env, await c.var.tenant.caller(), {
      type: "api_key.revoked",
      subject: { type: "api_key", id: record.id },
      payload: { id: record.id, revoked_at: record.revoked_at },
      once: `api_key.revoked:${record.id}`,
    });
    return c.json(record, 200);
  });
}
