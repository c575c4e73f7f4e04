import {
  type AnsweredPlan,
  type PersistPlan,
  persistedOf,
  persistStatement,
} from "../assess/persist";
import type { Env } from "../env";
import { logError } from "../lib/log";
import { type DeliveryMessage, deliveriesMadeHere, send } from "../webhooks/enqueue";
import { writeToPostgres } from "./ledger-postgres";
import type { LedgerStore, StoredEntry } from "./ledger-store";

/** Rows per Postgres write; a backlog flushes in several batches. */
const FLUSH_BATCH = 500;
/** Assessments per Postgres write: each is a statement of a few kilobytes. */
const FLUSH_WRITES = 100;

/** What the group commit needs of its Durable Object. */
export interface GroupCommitHost {
  storage: DurableObjectStorage;
  store: LedgerStore;
  /** Read at each write: the object's env as it is then (the tests cut the database this way). */
  env: () => Env;
  /** The org the object is bound to; nothing is written before it is bound. */
  orgId: () => string | undefined;
  waitUntil: (promise: Promise<unknown>) => void;
  /** Runs first in every write, before it reads what to send: the host sequences what queued. */
  beforeWrite: () => void;
}

/**
 * The ledger object's group commit to Postgres: one write is in flight at a time; appends that
 * arrive meanwhile wait for it and go out together in the next one, in sequence order, with the
 * assessments sequenced among them and the checkpoints their entries complete.
 */
export class GroupCommit {
  /** The highest sequence Postgres has (a mirror of the stored `flushed` meta). */
  flushed: number;
  private checkpointsPending: boolean;
  private flight: Promise<void> | null = null;

  constructor(private readonly host: GroupCommitHost) {
    this.flushed = Number(host.store.meta("flushed") ?? 0);
    this.checkpointsPending = host.store.hasUnflushedCheckpoints();
  }

  /** Whether anything local is not yet in Postgres: the reconciliation after a crash. */
  hasBacklog(headSequence: number): boolean {
    return headSequence > this.flushed || this.checkpointsPending;
  }

  /** A checkpoint was stored locally: the next write carries it. */
  checkpointAdded(): void {
    this.checkpointsPending = true;
  }

  /** Whether a write to Postgres is in flight. */
  get writing(): boolean {
    return this.flight !== null;
  }

  /** Returns once Postgres has every entry through `sequence` and every stored checkpoint. */
  async through(sequence: number): Promise<void> {
    while (this.flushed < sequence || this.checkpointsPending) await this.write();
  }

  /**
   * Waits out the write in flight (its failure is its own callers'), then makes sure the next
   * one starts: its first step, `beforeWrite`, is where what queued meanwhile is sequenced.
   */
  async afterWrite(): Promise<void> {
    await this.flight?.catch(() => {});
    // Whoever waits for this write (`through`) sees its failure; it is handled here only so
    // that a write nobody waits for cannot end as an unhandled rejection.
    this.write().catch(() => {});
  }

  private write(): Promise<void> {
    this.flight ??= this.flushOnce().finally(() => {
      this.flight = null;
    });
    return this.flight;
  }

  private async flushOnce(): Promise<void> {
    this.host.beforeWrite();
    const { store, storage } = this.host;
    const env = this.host.env();
    const orgId = this.host.orgId();
    if (!orgId) return;
    let entries = store.entriesAfter(this.flushed, FLUSH_BATCH);
    let through = entries.at(-1)?.sequence ?? this.flushed;
    // The assessments sequenced meanwhile go in the same transaction as their entries.
    const writes = store
      .writesBetween(this.flushed, through, FLUSH_WRITES)
      .map((w) => ({ sequence: w.sequence, plan: JSON.parse(w.body) as PersistPlan }));
    if (writes.length === FLUSH_WRITES) {
      through = (writes.at(-1) as { sequence: number }).sequence;
      entries = entries.filter((e) => e.sequence <= through);
    }
    const checkpoints = store.unflushedCheckpoints(through);
    if (entries.length === 0 && checkpoints.length === 0) return;
    const entryAt = new Map(entries.map((e) => [e.sequence, e]));
    const results = await writeToPostgres(env, orgId, entries, checkpoints, (db) =>
      writes.length === 0
        ? []
        : [
            ...writes.map((w) =>
              persistStatement(db, orgId, w.plan, entryAt.get(w.sequence) as StoredEntry),
            ),
            // The deliveries the assessments' events fanned out to, sent after the commit.
            deliveriesMadeHere(db),
          ],
    );
    this.flushed = Math.max(this.flushed, through);
    storage.transactionSync(() => {
      store.setMeta("flushed", String(this.flushed));
      store.markCheckpointsFlushed(checkpoints.map((c) => c.tree_size));
      writes.forEach((w, i) => {
        const status = persistedOf(results[i], w.plan);
        // A retry is answered from the record alone: the mandate and the inputs go, and so does
        // the counterparty's digest, which only the history reads (from Postgres).
        const kept: AnsweredPlan = {
          record: { ...w.plan.record, counterparty: null },
          ...(w.plan.review ? { review: w.plan.review } : {}),
        };
        store.setWriteStatus(w.sequence, status, JSON.stringify(kept));
        // A spend whose assessment the cap refused never happened.
        if (status !== "stored") store.removeSpend(w.sequence);
      });
    });
    this.checkpointsPending = store.hasUnflushedCheckpoints();
    const made = results[writes.length] as { rows: DeliveryMessage[] } | undefined;
    if (made && made.rows.length > 0) {
      this.host.waitUntil(
        send(env, made.rows).catch((error) =>
          logError("webhook enqueue failed", { error: String(error) }),
        ),
      );
    }
  }
}
