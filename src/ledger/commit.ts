import type { BatchResponse } from "drizzle-orm/batch";
import type { Batch, BatchOptions, Tenant } from "../auth/tenant";
import type { Database } from "../db/client";
import { auditEntries } from "../db/schema";
import { payloadDigest } from "../lib/digest";
import { newId } from "../lib/ids";
import type { Change } from "./ledger";
import { sequenceDeferred } from "./ledger";
import { auditEntryRow } from "./ledger-postgres";
import type { StoredEntry } from "./ledger-store";

/** A change to commit: what happened, to what, its payload, and what makes it happen once. */
export interface Commit extends Omit<Change, "once"> {
  /**
   * Keys under which the change is recorded once per org: a retry or a racing duplicate by any
   * of them gets the first entry (`replayed`), and its writes must then be idempotent. Without
   * keys every call is a change of its own.
   */
  once?: readonly string[];
}

/** What a commit wrote: its entry, whether an earlier commit made that entry, the writes' results. */
export interface Committed<T extends Batch> {
  entry: StoredEntry;
  replayed: boolean;
  results: BatchResponse<T>;
}

/**
 * The one way a change is recorded: the org's ledger object sequences `change` (without
 * waiting for Postgres), then the entry and the caller's `writes` go to Postgres in one
 * transaction in the caller's org, so no change lands without its ledger entry. The converse
 * does not hold: the ledger object writes every entry it sequenced too, later and
 * idempotently (a chain has no gaps), so when the transaction fails, or a conditional write in
 * it finds its condition false, the entry stays as the record of an attempt whose change did
 * not land, as a deferred append's always has. A change whose write is conditional therefore
 * checks its condition before it commits, and the race that is left (two callers between
 * that check and the write) can leave such an entry. `writes` sees the entry (a row may keep
 * its id and sequence); with `webhooks`, the events the writes make are delivered.
 */
export async function commit<T extends Batch>(
  tenant: Tenant,
  change: Commit,
  writes: (db: Database, entry: StoredEntry) => T,
  options: BatchOptions = {},
): Promise<Committed<T>> {
  const caller = await tenant.caller();
  const once = change.once?.length ? [...change.once] : [`${change.type}:${newId()}`];
  const { entry, replayed } = await sequenceDeferred(tenant.env, caller.orgId, {
    type: change.type,
    actor: { type: caller.actor.type, id: caller.actor.id },
    subject: change.subject,
    digest: payloadDigest(change.payload),
    once,
    // Kept a day for a retry or a racing duplicate: what the first commit set out to record.
    attachment: JSON.stringify(change.payload),
  });
  const [, ...results] = await tenant.batch(
    (db) => [
      db.insert(auditEntries).values(auditEntryRow(entry)).onConflictDoNothing(),
      ...writes(db, entry),
    ],
    options,
  );
  return { entry, replayed, results: results as BatchResponse<T> };
}
