import { z } from "@hono/zod-openapi";
import { and, desc, eq, lt, or, sql } from "drizzle-orm";
import type { Tenant } from "../auth/tenant";
import type { Database } from "../db/client";
import { decodeTimeCursor, encodeTimeCursor, type Page } from "../db/pagination";
import { agentKeys, agents } from "../db/schema";
import type { Env } from "../env";
import { ApiError, orNotFound } from "../errors";
import { commit } from "../ledger/commit";
import { StatusListMember } from "../schemas/status-lists";
import { placeColumns, settleKeyPlace, statusListOf } from "../status-lists/places";
import { type AgentRow, assertNotRevoked, lockAgent } from "./agents";
import type { PublicKey } from "./public-jwk";

export const AgentKey = z
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
    status_list: StatusListMember,
  })
  .openapi("AgentKey");

type KeyRow = typeof agentKeys.$inferSelect;

/** The key's record, with where its status is published. */
export function toKey(row: KeyRow, env: Env): z.infer<typeof AgentKey> {
  return { ...keyFacts(row), status_list: statusListOf(env, row.orgId, row) };
}

/**
 * The record without its place: the `agent_key.registered` payload, made before the entry
 * whose sequence gives the place.
 */
function keyFacts(row: KeyRow): Omit<z.infer<typeof AgentKey>, "status_list"> {
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

type AgentKeyView = z.infer<typeof AgentKey>;

/**
 * Registers a public key to a live agent of the org, committing `agent_key.registered` in the
 * transaction that inserts it, and answers the key and whether this call created it (a repeat
 * answers the stored key and records nothing).
 */
export async function registerAgentKey(
  tenant: Tenant,
  agentId: string,
  key: PublicKey,
): Promise<{ result: AgentKeyView; created: boolean }> {
  const [agent, stored] = await tenant.batch((db) => [
    db.select().from(agents).where(eq(agents.id, agentId)),
    db.select().from(agentKeys).where(eq(agentKeys.thumbprint, key.thumbprint)),
  ]);
  if (stored[0]) {
    const repeat = registered(tenant.env, agent[0], stored[0], false);
    // A key stored before its entry could be (the two were once written apart) is recorded
    // now, with the evidence it moves; otherwise the `once` key makes this a no-op.
    await commit(
      tenant,
      {
        type: "agent_key.registered",
        subject: { type: "agent", id: agentId },
        payload: keyFacts(stored[0]),
        once: [`agent_key.registered:${key.thumbprint}`],
      },
      (db) => [lockAgent(db, agentId), settleKeyEvidence(db, agentId, "key_registered")],
      { webhooks: true },
    );
    return repeat;
  }
  // The agent before the entry: nothing is recorded for a missing or revoked one.
  assertNotRevoked(orNotFound(agent[0]));
  const orgId = (await tenant.caller()).orgId;
  const now = new Date();
  const row: KeyRow = {
    orgId,
    thumbprint: key.thumbprint,
    agentId,
    // Only the thumbprint members, all strings (public-jwk.ts).
    jwk: key.jwk as KeyRow["jwk"],
    kty: key.kty,
    crv: key.crv,
    alg: key.alg,
    status: "active",
    createdAt: now,
    revokedAt: null,
    statusList: null,
    statusIdx: null,
  };
  // Inserted only for a live agent of this org (checked again here, under its lock); a
  // thumbprint is unique in the org, so a key identifies exactly one agent when an assessment
  // presents it. A trust change writes events: the batch sends their webhook deliveries. Its
  // status-list place is its entry's (docs/status-lists.md, "Issued"): the entry of a replay
  // is the first one, so every attempt writes the same place.
  const { results } = await commit(
    tenant,
    {
      type: "agent_key.registered",
      subject: { type: "agent", id: agentId },
      payload: keyFacts(row),
      once: [`agent_key.registered:${key.thumbprint}`],
    },
    // A replay (a retry after a failed write, a racing twin) writes the first attempt's time.
    (db, { terms, entry }) => {
      // A twin registered this key first, to another agent: the key is that agent's.
      if (terms.agent_id !== agentId) {
        throw new ApiError("key_in_use", [
          { path: "jwk", message: "this key is registered to another agent" },
        ]);
      }
      const place = placeColumns(tenant.env, orgId, entry.sequence);
      return [
        lockAgent(db, agentId),
        db.execute(sql`
      insert into agent_keys (thumbprint, agent_id, jwk, kty, crv, alg, created_at,
        status_list, status_idx)
      select ${key.thumbprint}, a.id, ${JSON.stringify(key.jwk)}::jsonb, ${key.kty},
             ${key.crv}, ${key.alg}, ${terms.created}::timestamptz,
             ${place.statusList}, ${place.statusIdx}
      from agents a where a.id = ${agentId} and a.status <> 'revoked'
      on conflict (org_id, thumbprint) do nothing`),
        settleKeyEvidence(db, agentId, "key_registered"),
        db.select().from(agents).where(eq(agents.id, agentId)),
        db.select().from(agentKeys).where(eq(agentKeys.thumbprint, key.thumbprint)),
        // A key registered to a suspended agent starts SUSPENDED, like the agent's others.
        settleKeyPlace(db, agentId, key.thumbprint),
      ];
    },
    { webhooks: true },
  );
  const [, inserted, , agentNow, storedNow] = results;
  const created = (inserted as unknown as { rowCount: number }).rowCount === 1;
  return registered(tenant.env, agentNow[0], storedNow[0], created);
}

/**
 * The answer to a registration, from the agent and the key as stored: 404 for no agent, 409 for
 * a revoked agent, a key of another agent or a revoked key; the key otherwise.
 */
function registered(
  env: Env,
  agent: AgentRow | undefined,
  stored: KeyRow | undefined,
  created: boolean,
): { result: AgentKeyView; created: boolean } {
  assertNotRevoked(orNotFound(agent));
  if (!stored) throw new ApiError("internal_error");
  if (stored.agentId !== agent?.id) {
    throw new ApiError("key_in_use", [
      { path: "jwk", message: "this key is registered to another agent" },
    ]);
  }
  if (!created && stored.status === "revoked") {
    throw new ApiError("key_revoked", [
      { path: "jwk", message: "this key was revoked and can never be registered again" },
    ]);
  }
  return { result: toKey(stored, env), created };
}

/** A page of the agent's keys, newest first (404: no such agent). */
export async function listAgentKeys(
  tenant: Tenant,
  agentId: string,
  query: { limit: number; cursor?: string | undefined },
): Promise<Page<AgentKeyView>> {
  const { limit, cursor } = query;
  const after = decodeTimeCursor(cursor);
  const [found, rows] = await tenant.batch((db) => [
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
  return {
    object: "list" as const,
    data: data.map((row) => toKey(row, tenant.env)),
    has_more: last !== undefined,
    next_cursor: last ? encodeTimeCursor(last.createdAt, last.thumbprint) : null,
  };
}

/**
 * Revokes one of the agent's keys, committed with `agent_key.revoked` (once per key) in one
 * transaction; a revoked one answers unchanged and records nothing.
 */
export async function revokeAgentKey(
  tenant: Tenant,
  agentId: string,
  keyId: string,
): Promise<AgentKeyView> {
  const ofAgent = and(eq(agentKeys.agentId, agentId), eq(agentKeys.thumbprint, keyId));
  const [found] = await tenant.batch((db) => [db.select().from(agentKeys).where(ofAgent)]);
  const current = orNotFound(found[0]);
  if (current.status !== "active") return toKey(current, tenant.env);
  const revokedAt = new Date();
  // Still conditional: a revoke that lost a race to another reads the key as that one left it.
  // A trust change writes events: the batch sends their webhook deliveries. The key's place
  // turns INVALID in the same transaction (docs/status-lists.md, "Issued").
  const { results } = await commit(
    tenant,
    {
      type: "agent_key.revoked",
      subject: { type: "agent", id: agentId },
      payload: { id: keyId, agent_id: agentId, revoked_at: revokedAt.toISOString() },
      once: [`agent_key.revoked:${keyId}`],
    },
    // A replay (a retry after a failed write, a racing twin) writes the first attempt's time.
    (db, { terms }) => [
      lockAgent(db, agentId),
      db
        .update(agentKeys)
        .set({ status: "revoked", revokedAt: new Date(terms.revoked_at) })
        .where(and(ofAgent, eq(agentKeys.status, "active"))),
      settleKeyEvidence(db, agentId, "key_revoked"),
      db.select().from(agentKeys).where(ofAgent),
      settleKeyPlace(db, agentId, keyId),
    ],
    { webhooks: true },
  );
  return toKey(orNotFound(results[3][0]), tenant.env);
}
