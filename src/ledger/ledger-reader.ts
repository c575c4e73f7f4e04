import { asc, gt } from "drizzle-orm";
import type { CheckpointRecord } from "#audit/checkpoint";
import type { AuditEntryRecord } from "#audit/verify";
import type { Tenant } from "../auth/tenant";
import { auditCheckpoints, auditEntries } from "../db/schema";
import { checkpointRecord, entryRecord } from "./ledger-rows";

export type LedgerRecord =
  | { kind: "entry"; entry: AuditEntryRecord }
  | { kind: "checkpoint"; checkpoint: CheckpointRecord };

const PAGE = 1000;

type EntryRow = typeof auditEntries.$inferSelect;
type CheckpointRow = typeof auditCheckpoints.$inferSelect;

/**
 * The org's ledger in export order (entries by sequence, each checkpoint right after the entry
 * at its tree size), read in pages: memory stays constant whatever the size of the log. Each
 * page is one round trip that fetches the next entries and, while few are buffered, the next
 * checkpoints.
 */
export async function* ledgerRecords(tenant: Tenant): AsyncGenerator<LedgerRecord> {
  let afterSequence = 0;
  let afterTreeSize = 0;
  let entriesDone = false;
  let checkpointsDone = false;
  const buffered: CheckpointRecord[] = [];

  while (!entriesDone || buffered.length > 0 || !checkpointsDone) {
    const wantCheckpoints: number = !checkpointsDone && buffered.length < PAGE ? PAGE : 0;
    const pageRows: [EntryRow[], CheckpointRow[]] = await tenant.batch((db) => [
      db
        .select()
        .from(auditEntries)
        .where(gt(auditEntries.sequence, afterSequence))
        .orderBy(asc(auditEntries.sequence))
        .limit(entriesDone ? 0 : PAGE),
      db
        .select()
        .from(auditCheckpoints)
        .where(gt(auditCheckpoints.treeSize, afterTreeSize))
        .orderBy(asc(auditCheckpoints.treeSize))
        .limit(wantCheckpoints),
    ]);
    const [entryRows, checkpointRows] = pageRows;
    if (wantCheckpoints > 0) {
      buffered.push(...checkpointRows.map(checkpointRecord));
      afterTreeSize = buffered.at(-1)?.tree_size ?? afterTreeSize;
      checkpointsDone = checkpointRows.length < PAGE;
    }
    if (!entriesDone) entriesDone = entryRows.length < PAGE;

    for (const row of entryRows) {
      const entry = entryRecord(row);
      while (buffered[0] && buffered[0].tree_size < entry.sequence) {
        yield { kind: "checkpoint", checkpoint: buffered.shift() as CheckpointRecord };
      }
      yield { kind: "entry", entry };
      while (buffered[0] && buffered[0].tree_size === entry.sequence) {
        yield { kind: "checkpoint", checkpoint: buffered.shift() as CheckpointRecord };
      }
      afterSequence = entry.sequence;
    }
    // Checkpoints beyond the last entry (their entries were deleted) come out at the end.
    if (entriesDone) {
      while (buffered.length > 0) {
        yield { kind: "checkpoint", checkpoint: buffered.shift() as CheckpointRecord };
      }
    }
  }
}
