import {
  type AnsweredPlan,
  type PersistPlan,
  persistedOf,
  persistStatement,
} from "../assess/persist";
import type { Env } from "../env";
import { writeToPostgres } from "../ledger/ledger-postgres";
import type { LedgerStore, StoredEntry } from "../ledger/ledger-store";
import { logError } from "../lib/log";
import { type DeliveryMessage, deliveriesMadeHere, send } from "../outbox/enqueue";

/** Rows per Postgres write; a backlog flushes in several batches. */
const FLUSH_BATCH = 500;
/** Assessments per Postgres write: each is a statement of a few kilobytes. */
const FLUSH_WRITES = 100;
/**
 * Plans held in memory for the next writes, at most: past it (writes that keep failing) the
 * rest are read from storage, so a database that refuses writes cannot grow the object's memory.
 */
const MAX_HELD = 2 * FLUSH_WRITES;

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
  /**
   * The plans sequenced since the last write, as their sections made them, with their entry's
   * hash: the write sends these rather than reading each body back and parsing it. A plan is
   * used only for the entry whose hash it names, so none can go out with another entry; after a
   * restart, and past MAX_HELD, bodies come from storage.
   */
  private readonly held = new Map<number, { hash: string; plan: PersistPlan }>();

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

  /** A plan just stored for the entry `sequence` (its hash `hash`): the next write sends it. */
  hold(sequence: number, hash: string, plan: PersistPlan): void {
    if (this.held.size < MAX_HELD) this.held.set(sequence, { hash, plan });
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
    const sequences = store.pendingWrites(this.flushed, through, FLUSH_WRITES);
    if (sequences.length === FLUSH_WRITES) {
      through = sequences.at(-1) as number;
      entries = entries.filter((e) => e.sequence <= through);
    }
    const checkpoints = store.unflushedCheckpoints(through);
    if (entries.length === 0 && checkpoints.length === 0) return;
    const entryAt = new Map(entries.map((e) => [e.sequence, e]));
    const writes = sequences.map((sequence) => ({
      sequence,
      plan: this.planOf(sequence, entryAt.get(sequence)),
    }));
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
    // Everything at or below the mark is in Postgres: no plan held for it is needed again.
    for (const sequence of this.held.keys()) {
      if (sequence <= this.flushed) this.held.delete(sequence);
    }
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

  /** The plan of the pending write `sequence`: held since its section, or read back from storage. */
  private planOf(sequence: number, entry: StoredEntry | undefined): PersistPlan {
    const held = this.held.get(sequence);
    if (held && held.hash === entry?.hash) return held.plan;
    const stored = this.host.store.write(sequence);
    if (!stored) throw new Error(`ledger: pending write ${sequence} has no body`);
    return JSON.parse(stored.body) as PersistPlan;
  }
}
