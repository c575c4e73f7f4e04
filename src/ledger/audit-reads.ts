import { and, desc, eq, gte, lt, lte, sql } from "drizzle-orm";
import type { Tenant } from "../auth/tenant";
import { decodeSequenceCursor, getById, page } from "../db/pagination";
import { auditCheckpoints, auditEntries } from "../db/schema";
import { ApiError } from "../errors";
import { isUuid } from "../lib/ids";
import { ledgerOf } from "./ledger";
import { checkpointRecord, entryRecord } from "./ledger-rows";

// Anchored means a signed checkpoint covers the entry: derived, so the row never changes.
const anchored = sql<boolean>`${auditEntries.sequence} <= coalesce(
  (select max(c.tree_size) from audit_checkpoints c), 0)`;

/** A page of the org's ledger entries, newest first, by type and time if asked. */
export async function listEntries(
  tenant: Tenant,
  query: {
    limit: number;
    cursor?: string | undefined;
    type?: string | undefined;
    from?: string | undefined;
    to?: string | undefined;
  },
) {
  const before = decodeSequenceCursor(query.cursor);
  const [rows] = await tenant.batch((db) => [
    db
      .select({ row: auditEntries, anchored })
      .from(auditEntries)
      .where(
        and(
          before === null ? undefined : lt(auditEntries.sequence, before),
          query.type === undefined ? undefined : eq(auditEntries.type, query.type),
          query.from === undefined ? undefined : gte(auditEntries.time, new Date(query.from)),
          query.to === undefined ? undefined : lte(auditEntries.time, new Date(query.to)),
        ),
      )
      .orderBy(desc(auditEntries.sequence))
      .limit(query.limit + 1),
  ]);
  const data = rows.map(({ row, anchored }) => ({
    object: "audit_entry" as const,
    ...entryRecord(row),
    leaf_hash: row.leafHash,
    status: anchored ? ("anchored" as const) : ("pending" as const),
  }));
  return page(data, query.limit, (e) => e.sequence);
}

/** An entry's inclusion proof against the newest checkpoint (pending until one covers it). */
export async function entryProof(tenant: Tenant, id: string) {
  if (!isUuid(id)) throw new ApiError("not_found");
  const row = await getById(tenant, auditEntries, id);
  const who = await tenant.caller();
  const answer = await ledgerOf(tenant.env, who.orgId).inclusion(row.sequence);
  return {
    object: "audit_proof" as const,
    entry_id: row.id,
    sequence: row.sequence,
    leaf_hash: row.leafHash,
    status: answer ? ("anchored" as const) : ("pending" as const),
    leaf_index: row.sequence - 1,
    tree_size: answer?.tree_size ?? null,
    audit_path: answer?.audit_path ?? null,
    checkpoint: answer?.checkpoint ?? null,
  };
}

/** A page of the org's checkpoints, newest first. */
export async function listCheckpoints(
  tenant: Tenant,
  query: { limit: number; cursor?: string | undefined },
) {
  const before = decodeSequenceCursor(query.cursor);
  const [rows] = await tenant.batch((db) => [
    db
      .select()
      .from(auditCheckpoints)
      .where(before === null ? undefined : lt(auditCheckpoints.treeSize, before))
      .orderBy(desc(auditCheckpoints.treeSize))
      .limit(query.limit + 1),
  ]);
  const data = rows.map((row) => ({ object: "checkpoint" as const, ...checkpointRecord(row) }));
  return page(data, query.limit, (cp) => cp.tree_size);
}
