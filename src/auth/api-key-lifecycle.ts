import { and, eq, isNull, sql } from "drizzle-orm";
import { listById, mapPage } from "../db/pagination";
import { apiKeys } from "../db/schema";
import { ApiError, orNotFound } from "../errors";
import { record as recordChange } from "../ledger/ledger";
import { newId } from "../lib/ids";
import { type ApiKeyMode, generateApiKey } from "./api-key";
import type { Scope } from "./scopes";
import type { Tenant } from "./tenant";

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
 * Creates an API key with checked `scopes` and records `api_key.created`; the plaintext key is
 * in the answer only. A key whose creation could not be recorded is revoked and the error
 * thrown.
 */
export async function createApiKey(
  tenant: Tenant,
  body: { name: string; mode: ApiKeyMode },
  scopes: Scope[],
) {
  const who = await tenant.caller();
  const { key, hash, prefix } = await generateApiKey(body.mode);
  const [rows] = await tenant.batch((db) => [
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
    await recordChange(tenant.env, who, {
      type: "api_key.created",
      subject: { type: "api_key", id: record.id },
      payload: record,
    });
  } catch (error) {
    // An unaudited key must not stay usable. Its plaintext was never shown, so nobody holds
    // it; revoking it as well (best effort) keeps listings honest.
    await tenant
      .batch((db) => [
        db.update(apiKeys).set({ revokedAt: sql`now()` }).where(eq(apiKeys.id, record.id)),
      ])
      .catch(() => undefined);
    throw error;
  }
  return { ...record, key };
}

/** A page of the org's keys, newest first. */
export async function listApiKeys(
  tenant: Tenant,
  query: { limit: number; cursor?: string | undefined },
) {
  return mapPage(await listById(tenant, apiKeys, query), toApiKey);
}

/** Revokes a key (a revoked one answers unchanged); recorded once per key. */
export async function revokeApiKey(tenant: Tenant, id: string) {
  // One statement revokes an active key or reads a revoked one; `changed` tells which, so a
  // repeated revoke answers the same record and records nothing new.
  // Two statements: the second reads the row as committed after the first, so a revoke that
  // lost a race still answers the revoked key.
  const [, current] = await tenant.batch((db) => [
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
  await recordChange(tenant.env, await tenant.caller(), {
    type: "api_key.revoked",
    subject: { type: "api_key", id: record.id },
    payload: { id: record.id, revoked_at: record.revoked_at },
    once: `api_key.revoked:${record.id}`,
  });
  return record;
}
