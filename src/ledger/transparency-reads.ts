import { and, desc, eq, lt } from "drizzle-orm";
import { logIdFor } from "#audit/checkpoint";
import { publicBatch } from "../auth/tenant";
import { decodeSequenceCursor, page } from "../db/pagination";
import { auditCheckpoints, auditEntries } from "../db/schema";
import type { Env } from "../env";
import { ApiError, orNotFound } from "../errors";
import { ledgerOf } from "./ledger";
import { checkpointRecord } from "./ledger-rows";

/** A log's newest signed checkpoint (with the org it belongs to, which is never returned). */
export async function newestCheckpoint(env: Env, logId: string) {
  const [rows] = await publicBatch(env, { "app.log_id": logId }, (db) => [
    db
      .select()
      .from(auditCheckpoints)
      .where(eq(auditCheckpoints.logId, logId))
      .orderBy(desc(auditCheckpoints.treeSize))
      .limit(1),
  ]);
  return orNotFound(rows[0]);
}

/** A page of a log's signed checkpoints, newest first (404: no such log). */
export async function logCheckpoints(
  env: Env,
  logId: string,
  query: { limit: number; cursor?: string | undefined },
) {
  const { limit, cursor } = query;
  const before = decodeSequenceCursor(cursor);
  const [rows] = await publicBatch(env, { "app.log_id": logId }, (db) => [
    db
      .select()
      .from(auditCheckpoints)
      .where(
        and(
          eq(auditCheckpoints.logId, logId),
          before === null ? undefined : lt(auditCheckpoints.treeSize, before),
        ),
      )
      .orderBy(desc(auditCheckpoints.treeSize))
      .limit(limit + 1),
  ]);
  if (rows.length === 0 && before === null) throw new ApiError("not_found");
  const data = rows.map((row) => ({ object: "checkpoint" as const, ...checkpointRecord(row) }));
  return page(data, limit, (cp) => cp.tree_size);
}

/** A consistency proof between two sizes the log's signed checkpoints have reached. */
export async function logConsistency(env: Env, logId: string, first: number, second: number) {
  const latest = await newestCheckpoint(env, logId);
  // Only sizes a signed checkpoint has reached are public.
  if (first > second || second > latest.treeSize) {
    throw new ApiError("invalid_request", [
      { path: "second", message: `must be ≥ first and ≤ ${latest.treeSize}` },
    ]);
  }
  const proof = await ledgerOf(env, latest.orgId).consistency(first, second);
  if (!proof) throw new ApiError("not_found");
  return { object: "consistency_proof" as const, log_id: logId, first, second, proof };
}

/** The inclusion proof of a leaf, by its RFC 6962 leaf hash (pending until anchored). */
export async function leafInclusion(env: Env, leafHash: string) {
  const [rows] = await publicBatch(env, { "app.leaf_hash": leafHash }, (db) => [
    db
      .select({ orgId: auditEntries.orgId, sequence: auditEntries.sequence })
      .from(auditEntries)
      .where(eq(auditEntries.leafHash, leafHash)),
  ]);
  const row = orNotFound(rows[0]);
  const answer = await ledgerOf(env, row.orgId).inclusion(row.sequence);
  return {
    object: "inclusion_proof" as const,
    log_id: logIdFor(row.orgId),
    leaf_hash: leafHash,
    status: answer ? ("anchored" as const) : ("pending" as const),
    leaf_index: answer?.leaf_index ?? null,
    tree_size: answer?.tree_size ?? null,
    audit_path: answer?.audit_path ?? null,
    checkpoint: answer?.checkpoint ?? null,
  };
}
