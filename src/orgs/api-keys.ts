import { and, eq, isNull } from "drizzle-orm";
import { type ApiKeyMode, generateApiKey } from "../auth/api-key";
import type { Scope } from "../auth/scopes";
import type { Tenant } from "../auth/tenant";
import { getById, listById, mapPage } from "../db/pagination";
import { apiKeys } from "../db/schema";
import { orNotFound } from "../errors";
import { commit } from "../ledger/commit";
import { newId } from "../lib/ids";

type ApiKeyRow = typeof apiKeys.$inferSelect;

export function toApiKey(row: ApiKeyRow) {
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

/**
 * Creates an API key with checked `scopes` and commits `api_key.created` in the transaction
 * that inserts it, so no key is usable without its entry; the plaintext key is in the answer
 * only.
 */
export async function createApiKey(
  tenant: Tenant,
  body: { name: string; mode: ApiKeyMode },
  scopes: Scope[],
) {
  const who = await tenant.caller();
  const { key, hash, prefix } = await generateApiKey(body.mode);
  const now = new Date();
  const row: ApiKeyRow = {
    id: newId(now.getTime()),
    orgId: who.orgId,
    name: body.name,
    keyHash: hash,
    prefix,
    mode: body.mode,
    scopes,
    createdByUserId: who.actor.type === "user" ? who.actor.id : null,
    createdAt: now,
    revokedAt: null,
  };
  const record = toApiKey(row);
  await commit(
    tenant,
    { type: "api_key.created", subject: { type: "api_key", id: record.id }, payload: record },
    (db) => [db.insert(apiKeys).values(row)],
  );
  return { ...record, key };
}

/** A page of the org's keys, newest first. */
export async function listApiKeys(
  tenant: Tenant,
  query: { limit: number; cursor?: string | undefined },
) {
  return mapPage(await listById(tenant, apiKeys, query), toApiKey);
}

/** Revokes a key (a revoked one answers unchanged); committed with its entry, once per key. */
export async function revokeApiKey(tenant: Tenant, id: string) {
  const current = await getById(tenant, apiKeys, id);
  if (current.revokedAt !== null) return toApiKey(current);
  const revokedAt = new Date();
  // Still conditional, and read back after: a revoke that lost a race to another answers the
  // key as that one revoked it.
  const { results } = await commit(
    tenant,
    {
      type: "api_key.revoked",
      subject: { type: "api_key", id },
      payload: { id, revoked_at: revokedAt.toISOString() },
      once: [`api_key.revoked:${id}`],
    },
    // A replay (a retry after a failed write, a racing twin) writes the first attempt's time.
    (db, { terms }) => [
      db
        .update(apiKeys)
        .set({ revokedAt: new Date(terms.revoked_at) })
        .where(and(eq(apiKeys.id, id), isNull(apiKeys.revokedAt))),
      db.select().from(apiKeys).where(eq(apiKeys.id, id)),
    ],
  );
  return toApiKey(orNotFound(results[1][0]));
}
