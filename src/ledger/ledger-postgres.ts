import { inArray, sql } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import type { CheckpointRecord } from "#audit/checkpoint";
import { type Batch, orgBatchOf } from "../auth/tenant";
import { type Database, isDatabaseUnavailable } from "../db/client";
import { columnJson } from "../db/column-json";
import { auditCheckpoints, auditEntries, events } from "../db/schema";
import type { Env } from "../env";
import { newId } from "../lib/ids";
import { LEDGER_CONFLICT } from "../schemas/vocabulary";
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
    if (entries.length > 0) statements.push(insertEntries(db, entries));
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
  let skipped: SkippedEntry[];
  let done: unknown[];
  try {
    let count = 0;
    const results = await orgBatchOf(env, orgId, (db) => {
      const statements = writes(db);
      count = statements.length;
      return [...statements, ...work(db)] as unknown as Batch;
    });
    skipped = entries.length > 0 ? (results[0] as unknown as { rows: SkippedEntry[] }).rows : [];
    done = results.slice(count);
  } catch (error) {
    if (isDatabaseUnavailable(error)) throw new Error(`${LEDGER_UNAVAILABLE}: ${String(error)}`);
    throw error;
  }
  const expected = new Map(entries.map((e) => [e.sequence, e.hash]));
  // A row committed by another transaction while the insert ran is not in its snapshot: read
  // those few again (a rare race with a deferred append's own write).
  const unseen = skipped.filter((row) => row.stored === null).map((row) => Number(row.sequence));
  const seen = skipped
    .filter((row) => row.stored !== null)
    .map((row) => ({ sequence: Number(row.sequence), hash: row.stored as string }));
  const reread =
    unseen.length === 0
      ? []
      : (
          await orgBatchOf(env, orgId, (db) => [
            db
              .select({ sequence: auditEntries.sequence, hash: auditEntries.hash })
              .from(auditEntries)
              .where(inArray(auditEntries.sequence, unseen)),
          ])
        )[0];
  const conflicting = [...seen, ...reread].filter((row) => expected.get(row.sequence) !== row.hash);
  if (conflicting.length > 0) {
    // Someone wrote a row at a sequence only this ledger may assign. Never paper over it.
    const sequences = conflicting.map((r) => r.sequence).sort((a, b) => a - b);
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
    throw new Error(`${LEDGER_CONFLICT}: sequences ${sequences.join(",")}`);
  }
  return done;
}

/** An entry the insert did not add, with the hash already stored at its sequence (if seen). */
interface SkippedEntry {
  sequence: string | number;
  stored: string | null;
}

/**
 * Inserts the entries and answers, in the same statement, those it skipped because a row was
 * already there, with that row's hash: a retried batch finds its own rows (same hashes), a
 * foreign row at a sequence only this ledger assigns shows as a different hash. The rows go as
 * one JSON parameter, and only the skipped ones come back: one statement per batch instead of
 * an insert and a read-back of every row. The outer select sees the rows as they were before
 * the insert (one snapshot), so a row it skipped that was committed meanwhile shows as null.
 */
function insertEntries(db: Database, entries: StoredEntry[]) {
  const json = `[${entries.map((e) => columnJson(auditEntries, auditEntryRow(e))).join(",")}]`;
  return db.execute(sql`
    with batch as (
      select * from json_populate_recordset(null::audit_entries, ${json}::json)
    ), inserted as (
      insert into audit_entries (sequence, id, type, actor_type, actor_id, subject_type,
        subject_id, digest, time, prev_hash, hash, leaf_hash)
      select sequence, id, type, actor_type, actor_id, subject_type, subject_id, digest, time,
        prev_hash, hash, leaf_hash from batch
      on conflict do nothing
      returning sequence
    )
    select b.sequence, e.hash as stored from batch b
      left join audit_entries e on e.sequence = b.sequence
     where b.sequence not in (select sequence from inserted)`);
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
