import type { CheckpointRecord } from "#audit/checkpoint";
import type { AuditEntryRecord } from "#audit/verify";
import type { auditCheckpoints, auditEntries } from "../db/schema";

type EntryRow = typeof auditEntries.$inferSelect;
type CheckpointRow = typeof auditCheckpoints.$inferSelect;

/** A stored row as the verification algorithm and the export see it. */
export function entryRecord(row: EntryRow): AuditEntryRecord {
  return {
    id: row.id,
    sequence: row.sequence,
    type: row.type,
    actor: { type: row.actorType, id: row.actorId },
    subject: row.subjectType === null ? null : { type: row.subjectType, id: row.subjectId ?? "" },
    digest: row.digest,
    time: row.time.toISOString(),
    prev_hash: row.prevHash,
    hash: row.hash,
  };
}

export function checkpointRecord(row: CheckpointRow): CheckpointRecord {
  return {
    log_id: row.logId,
    tree_size: row.treeSize,
    root_hash: row.rootHash,
    time: row.time.toISOString(),
    note: row.note,
    jws: row.jws,
    previous_tree_size: row.previousTreeSize,
    consistency_proof: row.consistencyProof,
  };
}
