import { database } from "../db/client";
import { auditCheckpoints, auditEntries } from "../db/schema";
import { setTenant } from "../db/tenant";
import type { Env } from "../env";
import type { CheckpointRecord } from "./checkpoint";
import type { StoredEntry } from "./ledger-store";

/**
 * Writes a batch of the ledger's entries and checkpoints to Postgres in one round trip (one
 * transaction, under the org's RLS). Idempotent: a retried batch after a crash or a timeout
 * finds its rows already there and changes nothing.
 */
export async function writeToPostgres(
  env: Env,
  orgId: string,
  entries: StoredEntry[],
  checkpoints: CheckpointRecord[],
): Promise<void> {
  const db = database(env);
  const writes = [];
  if (entries.length > 0) {
    writes.push(
      db
        .insert(auditEntries)
        .values(
          entries.map((e) => ({
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
          })),
        )
        .onConflictDoNothing(),
    );
  }
  if (checkpoints.length > 0) {
    writes.push(
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
  await db.batch([db.execute(setTenant(orgId)), ...writes]);
}
