import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { and, desc, eq, lt, or, sql } from "drizzle-orm";
import type { Database } from "../db/client";
import { agentKeys, agents } from "../db/schema";
import { ApiError, orNotFound } from "../errors";
import type { AppEnv } from "../http/context";
import { decodeTimeCursor, encodeTimeCursor } from "../http/pagination";
import { guarded } from "../http/route";
import { errorResponses, json, jsonBody, rowId } from "../http/schemas";
import { assertNotRevoked, lockAgent } from "../identity/agents";
import { parsePublicJwk } from "../identity/public-jwk";
import { record } from "../ledger/ledger";
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

const AgentKey = z
  .object({
    object: z.literal("agent_key"),
    id: z.string().openapi({ description: "The key's RFC 7638 thumbprint (SHA-256, base64url)" }),
    agent_id: z.string(),
    kty: z.string(),
    crv: z.string().nullable(),
    alg: z.string().openapi({ description: "The JWS algorithm this key verifies" }),
    jwk: z.record(z.string(), z.string()).openapi({ description: "The public key" }),
    status: z.enum(["active", "revoked"]),
    created: z.string(),
    revoked_at: z.string().nullable(),
  })
  .openapi("AgentKey");

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

type KeyRow = typeof agentKeys.$inferSelect;

function toKey(row: KeyRow): z.infer<typeof AgentKey> {
  return {
    object: "agent_key",
    id: row.thumbprint,
    agent_id: row.agentId,
    kty: row.kty,
    crv: row.crv,
    alg: row.alg,
    jwk: row.jwk,
    status: row.status,
    created: row.createdAt.toISOString(),
    revoked_at: row.revokedAt?.toISOString() ?? null,
  };
}

/** Why a card bound to the agent stopped being verified without a new check. */
const SIGNER_REVOKED = [
  {
    code: "signing_key_revoked",
    message: "the key whose signature verified this card has been revoked",
  },
];
const SIGNER_REVOKED_SIGNATURE = { status: "revoked_key", message: "the key is revoked" };

/**
 * Brings the evidence keys give up to date after a key moved: the count of active keys, and
 * the card, which stays verified only while some key that signed it validly is still an active
 * key of the agent. An orphaned card becomes `unverified` (its valid signatures `revoked_key`)
 * in the same statement, so trust moves once. Writes only when something changed.
 */
function settleKeyEvidence(db: Database, agentId: string, reason: string) {
  const active = sql`(select count(*)::int from agent_keys k
    where k.agent_id = a.id and k.status = 'active')`;
  const orphaned = sql`(a.card_status = 'verified' and not exists (
    select 1 from jsonb_array_elements(a.card_signatures) s
    join agent_keys k on k.thumbprint = s->>'kid' and k.agent_id = a.id and k.status = 'active'
    where s->>'status' = 'valid'))`;
  const revokedSignatures = sql`(select coalesce(jsonb_agg(case when s->>'status' = 'valid'
      then s || ${JSON.stringify(SIGNER_REVOKED_SIGNATURE)}::jsonb else s end order by i),
      '[]'::jsonb)
    from jsonb_array_elements(a.card_signatures) with ordinality as e(s, i))`;
  return db.execute(sql`
    update agents a set
      active_keys = ${active},
      card_status = case when ${orphaned} then 'unverified' else a.card_status end,
      card_verified_at = case when ${orphaned} then null else a.card_verified_at end,
      card_reasons = case when ${orphaned}
        then a.card_reasons || ${JSON.stringify(SIGNER_REVOKED)}::jsonb else a.card_reasons end,
      card_signatures = case when ${orphaned} then ${revokedSignatures} else a.card_signatures end,
      trust_reason = ${reason}
    where a.id = ${agentId} and (a.active_keys <> ${active} or ${orphaned})`);
}

export function registerAgentsKeys(app: OpenAPIHono<AppEnv>) {
  app.openapi(register, async (c) => {
    const agentId = rowId(c.req.valid("param").id);
    const key = await parsePublicJwk(c.req.valid("json").jwk);
    // Inserted only for a live agent of this org; a thumbprint is unique in the org, so a key
    // identifies exactly one agent when an assessment presents it.
    // A trust change writes events: the batch sends their webhook deliveries.
    const [, inserted, , agent, stored] = await c.var.tenant.batch(
      (db) => [
        lockAgent(db, agentId),
        db.execute(sql`
        insert into agent_keys (thumbprint, agent_id, jwk, kty, crv, alg)
        select ${key.thumbprint}, a.id, ${JSON.stringify(key.jwk)}::jsonb, ${key.kty},
               ${key.crv}, ${key.alg}
        from agents a where a.id = ${agentId} and a.status <> 'revoked'
        on conflict (org_id, thumbprint) do nothing`),
        settleKeyEvidence(db, agentId, "key_registered"),
        db.select().from(agents).where(eq(agents.id, agentId)),
        db.select().from(agentKeys).where(eq(agentKeys.thumbprint, key.thumbprint)),
      ],
      { webhooks: true },
    );
    const agentRow = orNotFound(agent[0]);
    assertNotRevoked(agentRow);
    const row = stored[0];
    if (!row) throw new ApiError("internal_error");
    if (row.agentId !== agentId) {
      throw new ApiError("key_in_use", [
        { path: "jwk", message: "this key is registered to another agent" },
      ]);
    }
    const created = (inserted as unknown as { rowCount: number }).rowCount === 1;
    if (!created && row.status === "revoked") {
      throw new ApiError("key_revoked", [
        { path: "jwk", message: "this key was revoked and can never be registered again" },
      ]);
    }
    const result = toKey(row);
    // Also when the key was already there: a retry whose first attempt committed but never
    // reached the ledger records it now; otherwise the `once` key makes this a no-op.
    await record(c.env, await c.var.tenant.caller(), {
      type: "agent_key.registered",
      subject: { type: "agent", id: agentId },
      payload: result,
      once: `agent_key.registered:${result.id}`,
    });
    return c.json(result, created ? 201 : 200);
  });

  app.openapi(list, async (c) => {
    const agentId = rowId(c.req.valid("param").id);
    const { limit, cursor } = c.req.valid("query");
    const after = decodeTimeCursor(cursor);
    const [found, rows] = await c.var.tenant.batch((db) => [
      db.select({ id: agents.id }).from(agents).where(eq(agents.id, agentId)),
      db
        .select()
        .from(agentKeys)
        .where(
          and(
            eq(agentKeys.agentId, agentId),
            after
              ? or(
                  lt(agentKeys.createdAt, after.time),
                  and(eq(agentKeys.createdAt, after.time), lt(agentKeys.thumbprint, after.key)),
                )
              : undefined,
          ),
        )
        .orderBy(desc(agentKeys.createdAt), desc(agentKeys.thumbprint))
        .limit(limit + 1),
    ]);
    orNotFound(found[0]);
    const data = rows.slice(0, limit);
    const last = rows.length > limit ? data.at(-1) : undefined;
    return c.json(
      {
        object: "list" as const,
        data: data.map(toKey),
        has_more: last !== undefined,
        next_cursor: last ? encodeTimeCursor(last.createdAt, last.thumbprint) : null,
      },
      200,
    );
  });

  app.openapi(revoke, async (c) => {
    const params = c.req.valid("param");
    const agentId = rowId(params.id);
    const keyId = params.keyId;
    const [, , , rows] = await c.var.tenant.batch(
      (db) => [
        lockAgent(db, agentId),
        db
          .update(agentKeys)
          .set({ status: "revoked", revokedAt: sql`now()` })
          .where(
            and(
              eq(agentKeys.agentId, agentId),
              eq(agentKeys.thumbprint, keyId),
              eq(agentKeys.status, "active"),
            ),
          ),
        settleKeyEvidence(db, agentId, "key_revoked"),
        db
          .select()
          .from(agentKeys)
          .where(and(eq(agentKeys.agentId, agentId), eq(agentKeys.thumbprint, keyId))),
      ],
      { webhooks: true },
    );
    const row = orNotFound(rows[0]);
    const result = toKey(row);
    await record(c.env, await c.var.tenant.caller(), {
      type: "agent_key.revoked",
      subject: { type: "agent", id: agentId },
      payload: { id: result.id, agent_id: agentId, revoked_at: result.revoked_at },
      once: `agent_key.revoked:${result.id}`,
    });
    return c.json(result, 200);
  });
}
