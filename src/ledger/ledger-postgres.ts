import { between } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import { type Database, isDatabaseUnavailable } from "../db/client";
import { auditCheckpoints, auditEntries, events } from "../db/schema";
import { type Batch, orgBatchOf } from "../db/tenant";
import type { Env } from "../env";
import { newId } from "../lib/ids";
import type { CheckpointRecord } from "./checkpoint";
import type { StoredEntry } from "./ledger-store";

/**
 * Writes a batch of the ledger's entries and checkpoints to Postgres in one round trip (one
 * transaction, under the org's RLS), with `work`: the statements the ledger object writes with
 * its entries (assessments), whose results it answers in order. Idempotent: a retried batch
 * after a crash or a timeout finds its rows already there and changes nothing.
 */
export async function writeToPostgres(
  env: Env,
  orgId: string,
  entries: StoredEntry[],
  checkpoints: CheckpointRecord[],
  work: (db: Database) => BatchItem<"pg">[] = () => [],
): Promise<unknown[]> {
  const writes = (db: Database) => {
    const statements = [];
    if (entries.length > 0) {
      statements.push(
        db.insert(auditEntries).values(entries.map(auditEntryRow)).onConflictDoNothing(),
      );
    }
    if (checkpoints.length > 0) {
      statements.push(
        db
          .insert(auditCheckpoints)
          .values(
            checkpoints.map((c) => ({
              logId: c.log_id,
              treeSize: c.tree_size,
              rootHash: c.root_hash,
              time: new Date(c.time),
              note: c.note,
              jws: c.jws,
              previousTreeSize: c.previous_tree_size,
              consistencyProof: c.consistency_proof,
            })),
          )
          .onConflictDoNothing(),
      );
    }
    return statements;
  };
  const first = entries[0]?.sequence ?? 0;
  const last = entries.at(-1)?.sequence ?? 0;
  let stored: { sequence: number; hash: string }[];
  let done: unknown[];
  try {
    let count = 0;
    const results = await orgBatchOf(env, orgId, (db) => {
      const statements = writes(db);
      count = statements.length;
      return [
        ...statements,
        // Read back in the same round trip: a row already there must be this very entry.
        db
          .select({ sequence: auditEntries.sequence, hash: auditEntries.hash })
          .from(auditEntries)
          .where(between(auditEntries.sequence, first, last)),
        ...work(db),
      ] as unknown as Batch;
    });
    stored = results[count] as { sequence: number; hash: string }[];
    done = results.slice(count + 1);
  } catch (error) {
    if (isDatabaseUnavailable(error)) throw new Error(`${LEDGER_UNAVAILABLE}: ${String(error)}`);
    throw error;
  }
  const expected = new Map(entries.map((e) => [e.sequence, e.hash]));
  const conflicting = stored.filter((row) => expected.get(row.sequence) !== row.hash);
  if (conflicting.length > 0) {
    // Someone wrote a row at a sequence only this ledger may assign. Never paper over it.
    const sequences = conflicting.map((r) => r.sequence);
    await orgBatchOf(env, orgId, (db) => [
      db
        .insert(events)
        .values({
          id: newId(),
          type: "audit.integrity_alert",
          data: { reason: LEDGER_CONFLICT, sequences },
          dedupeKey: `${LEDGER_CONFLICT}:${sequences.join(",")}`,
        })
        .onConflictDoNothing(),
    ]);
    throw new Error(
      `${LEDGER_CONFLICT}: sequences ${conflicting.map((r) => r.sequence).join(",")}`,
    );
  }
  return done;
}

/** The Postgres row of a ledger entry: the one mapping, for the ledger and deferred writers. */
export function auditEntryRow(e: StoredEntry): typeof auditEntries.$inferInsert {
  return {
    sequence: e.sequence,
    id: e.id,
    type: e.type,
    actorType: e.actor.type,
    actorId: e.actor.id,
    subjectType: e.subject?.type ?? null,
    subjectId: e.subject?.id ?? null,
    digest: e.digest,
    time: new Date(e.time),
    prevHash: e.prev_hash,
    hash: e.hash,
    leafHash: e.leaf_hash,
  };
}

/** Error message prefixes that survive the Durable Object's RPC boundary. */
export const LEDGER_UNAVAILABLE = "ledger_unavailable";
export const LEDGER_CONFLICT = "ledger_conflict";
