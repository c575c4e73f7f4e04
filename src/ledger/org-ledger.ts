import { DurableObject } from "cloudflare:workers";
import {
  type AssessmentCommit,
  type CommitAnswer,
  signedRecord,
  type Verdict,
} from "../assess/commit";
import {
  type AnsweredPlan,
  type PersistPlan,
  persistedOf,
  persistStatement,
  recordOf,
} from "../assess/persist";
import { RISK_PAYLOAD_TYP } from "../assess/risk-payload";
import { type Env, modeOf } from "../env";
import { payloadDigest } from "../lib/digest";
import { newId } from "../lib/ids";
import { logError } from "../lib/log";
import { signer } from "../signing/signer";
import { type DeliveryMessage, deliveriesMadeHere, send } from "../webhooks/enqueue";
import { entryHash, GENESIS_HASH, type LedgerEntry, leafHash, type Party } from "./chain";
import { type CheckpointRecord, checkpointNote, logIdFor } from "./checkpoint";
import { writeToPostgres } from "./ledger-postgres";
import { type Head, LedgerStore, type StoredEntry, type Voiding } from "./ledger-store";
import { appendLeaf, consistencyProof, inclusionProof, rootAt, verifyConsistency } from "./merkle";

/** One thing that happened, as a caller hands it to the ledger. */
export interface AppendInput {
  type: string;
  actor: Party;
  subject: Party | null;
  /** `sha256:<hex>` of the canonical payload; the payload itself never enters the ledger. */
  digest: string;
  /**
   * Makes the append idempotent: a second append with the same key returns the first entry
   * instead of adding one (a retried request whose first attempt already reached the ledger).
   */
  once?: string;
}

export interface Appended {
  entry_id: string;
  sequence: number;
  hash: string;
  status: "pending" | "anchored";
}

/** What `appendDeferred` answers: the entry to write, and whether an earlier append made it. */
export interface DeferredAppend {
  entry: StoredEntry;
  /** True when the `once` key had been used: `entry` and `attachment` are the first append's. */
  replayed: boolean;
  /** The first append's attachment on a replay (null once it has expired). */
  attachment: string | null;
}

/** How long a deferred append's attachment is kept for a retry or a racing duplicate. */
const ATTACHMENT_TTL_MS = 24 * 60 * 60 * 1000;

export interface InclusionAnswer {
  sequence: number;
  leaf_index: number;
  leaf_hash: string;
  tree_size: number;
  audit_path: string[];
  checkpoint: CheckpointRecord;
}

/** How long appends wait for a checkpoint to cover them: the window of `pending`. */
export const ANCHOR_DELAY_MS = 10_000;

export function anchorDelay(env: Env): number {
  const configured = Number(env.LEDGER_ANCHOR_DELAY_MS);
  return Number.isInteger(configured) && configured > 0 ? configured : ANCHOR_DELAY_MS;
}
/** Rows per Postgres write; a backlog flushes in several batches. */
const FLUSH_BATCH = 500;
/** Assessments per Postgres write: each is a statement of a few kilobytes. */
const FLUSH_WRITES = 100;

/**
 * The sequencer of one organization's audit ledger (one instance per org, by name). It alone
 * assigns sequence numbers: the chain head lives in its own SQLite storage and every append
 * computes its hash synchronously, so no two appends can interleave. Entries reach Postgres by
 * group commit before an append returns; checkpoints are built by the alarm (and the Cron
 * sweep), signed, and flushed the same way.
 */
export class OrgLedger extends DurableObject<Env> {
  private readonly store: LedgerStore;
  // In-memory mirrors of what storage holds, read once at activation: the hot path of an
  // append then touches SQLite only to write.
  private head: Head | null;
  private orgId: string | undefined;
  private flushed: number;
  private checkpointsPending: boolean;
  private alarmSet = false;
  private flight: Promise<void> | null = null;
  private anchoring: Promise<CheckpointRecord | null> | null = null;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.store = new LedgerStore(ctx.storage.sql);
    this.head = this.store.head();
    this.orgId = this.store.meta("org_id");
    this.flushed = Number(this.store.meta("flushed") ?? 0);
    this.checkpointsPending = this.store.hasUnflushedCheckpoints();
    // Reconcile: a crash between the local commit and the Postgres write left a backlog. The
    // alarm writes it out (and anchors it) even if no further append ever arrives.
    if ((this.head?.sequence ?? 0) > this.flushed || this.checkpointsPending) {
      this.alarmSet = true;
      void ctx.storage.setAlarm(Date.now());
    }
  }

  /** Appends entries in order and returns once Postgres has them. */
  async append(orgId: string, inputs: AppendInput[]): Promise<Appended[]> {
    return this.appendThen(orgId, inputs, () => {});
  }

  /**
   * Appends a revocation and, in the same synchronous transaction, voids what it revokes
   * (`voids.key`, e.g. `action_mandate:<id>`): a redemption the ledger object sequences after
   * it is refused (`appendUnlessVoided`), one sequenced before it has a lower sequence. So a
   * revocation and a redemption are ordered by the ledger, whatever their requests read
   * before. Returns once Postgres has the entry; a retry (same `once`) keeps the first
   * revocation's sequence and time.
   */
  async revoke(
    orgId: string,
    input: AppendInput & { once: string },
    voids: { key: string; at: string },
  ): Promise<Appended> {
    const [appended] = await this.appendThen(orgId, [input], ([revocation]) => {
      if (revocation) this.store.setVoiding({ ...voids, sequence: revocation.sequence });
    });
    if (!appended) throw new Error(`ledger ${orgId}: revocation not appended`);
    return appended;
  }

  /** `append`, with `also` run inside the sequencing transaction on what was appended. */
  private async appendThen(
    orgId: string,
    inputs: AppendInput[],
    also: (appended: Appended[]) => void,
  ): Promise<Appended[]> {
    this.bind(orgId);
    let head = this.head;
    const appended = this.ctx.storage.transactionSync(() => {
      const answers = inputs.map((input) => {
        const [answer, next] = this.sequence(orgId, input, head);
        head = next;
        return answer;
      });
      also(answers);
      return answers;
    });
    // Only now, with the transaction committed, does the in-memory head move.
    this.head = head;
    const last = Math.max(0, ...appended.map((a) => a.sequence));
    try {
      await this.flushThrough(last);
    } finally {
      // Even when the write failed: the alarm retries it, so the entries reach Postgres anyway.
      await this.scheduleAnchor();
    }
    return appended;
  }

  /**
   * Sequences one entry without waiting for Postgres: the caller writes the entry itself, in
   * the same transaction as the change it records (one round trip instead of two). The alarm
   * writes it too, later and idempotently, so a caller that fails after this call loses
   * nothing from the ledger. `once` (one or more keys) makes it idempotent: a retry or a racing
   * duplicate, by any of the keys, gets the first entry and the first append's `attachment`
   * (what that caller set out to write), so it can finish that work instead of starting its own.
   */
  async appendDeferred(
    orgId: string,
    input: Omit<AppendInput, "once"> & { once: string[]; attachment: string },
  ): Promise<DeferredAppend> {
    const answer = await this.deferred(orgId, input, []);
    if ("voided" in answer) throw new Error(`ledger ${orgId}: voided without a void key`);
    return answer;
  }

  /**
   * `appendDeferred` for what a revocation can void (a grant's redemption): after a replay by
   * the `once` keys (the first redemption is still the first), refused if any `voidedBy` key
   * was revoked, checked in the same synchronous step that sequences the entry. The answer is
   * then the revocation, and nothing is appended.
   */
  async appendUnlessVoided(
    orgId: string,
    input: Omit<AppendInput, "once"> & { once: string[]; attachment: string; voidedBy: string[] },
  ): Promise<DeferredAppend | { voided: Voiding }> {
    const { voidedBy, ...append } = input;
    return this.deferred(orgId, append, voidedBy);
  }

  // No await before the transaction: the once keys, the voids and the sequencing are one step.
  private async deferred(
    orgId: string,
    input: Omit<AppendInput, "once"> & { once: string[]; attachment: string },
    voidedBy: readonly string[],
  ): Promise<DeferredAppend | { voided: Voiding }> {
    this.bind(orgId);
    // Several keys, one entry: the first key already used names the earlier append.
    for (const key of input.once) {
      const earlier = this.store.onceEntry(key);
      if (earlier) {
        return {
          entry: earlier,
          replayed: true,
          attachment: this.store.attachment(earlier.sequence),
        };
      }
    }
    for (const key of voidedBy) {
      const voided = this.store.voiding(key);
      if (voided) return { voided };
    }
    const [primary, ...others] = input.once;
    if (primary === undefined) throw new Error("appendDeferred needs a once key");
    const head = this.head;
    const [answer, next] = this.ctx.storage.transactionSync(() => {
      const sequenced = this.sequence(orgId, { ...input, once: primary }, head);
      for (const key of others) this.store.setOnce(key, sequenced[0].sequence);
      this.store.setAttachment(sequenced[0].sequence, input.attachment, Date.now());
      return sequenced;
    });
    this.head = next;
    await this.scheduleAnchor();
    const entry = this.store.entry(answer.sequence);
    if (!entry) throw new Error(`ledger ${orgId}: entry ${answer.sequence} vanished`);
    return { entry, replayed: false, attachment: null };
  }

  /**
   * Commits a fresh assessment (docs/architecture.md, "The assess path"): the second and last
   * hop of `POST /v1/assess`. Under its keys, once: a retry or a racing duplicate gets the first
   * commit's answer. The candidate verdicts are signed first; then, in one synchronous critical
   * section, a credential-backed approval is checked against what this org approved before
   * under the same open mandate (one consent pays once, budgets and recurrence across closed
   * mandates), the chosen verdict is sequenced with its write, and the spend recorded. The
   * answer waits for the group commit that writes the entry and the assessment together.
   */
  async commitAssessment(orgId: string, commit: AssessmentCommit): Promise<CommitAnswer> {
    this.bind(orgId);
    const earlier = this.earlierOf(commit.once);
    if (earlier) return this.answerFor(earlier, true);
    const candidates: Verdict[] = commit.spend
      ? [
          commit.verdict,
          commit.spend.instead.already_consumed,
          commit.spend.instead.budget_exceeded,
        ]
      : [commit.verdict];
    // Signed before the critical section, which must not await: every verdict it may choose.
    const key = await signer(this.env);
    const signatures = await Promise.all(
      candidates.map((verdict) => key.signClaims(verdict.claims, RISK_PAYLOAD_TYP)),
    );
    // A duplicate may have committed while this one signed.
    const raced = this.earlierOf(commit.once);
    if (raced) return this.answerFor(raced, true);
    const choice = this.spendChoice(commit);
    const verdict = candidates[choice] as Verdict;
    const jws = signatures[choice] as string;
    const record = signedRecord(
      commit.record,
      verdict,
      { jws, kid: key.kid },
      Math.max(0, Math.round(Date.now() - commit.receivedAt)),
    );
    const plan: PersistPlan = {
      record,
      mandate: commit.mandate,
      events: verdict.events,
      ...(commit.inputs ? { inputs: commit.inputs } : {}),
      ...(commit.shadow ? { shadow: commit.shadow } : {}),
    };
    const [primary, ...others] = commit.once;
    if (primary === undefined) throw new Error("commitAssessment needs a once key");
    const head = this.head;
    const [answer, next] = this.ctx.storage.transactionSync(() => {
      const sequenced = this.sequence(
        orgId,
        {
          type: "assessment.completed",
          actor: commit.actor,
          subject: { type: "assessment", id: record.id },
          digest: payloadDigest(record),
          once: primary,
        },
        head,
      );
      const sequence = sequenced[0].sequence;
      for (const other of others) this.store.setOnce(other, sequence);
      this.store.setWrite(sequence, JSON.stringify(plan), Date.now());
      const spend = commit.spend;
      if (spend && choice === 0 && record.decision === "approve") {
        this.store.addSpend(spend.root, spend.transaction, spend.amount, spend.currency, sequence);
      }
      return sequenced;
    });
    this.head = next;
    await this.scheduleAnchor();
    if (modeOf(this.env) === "test" && commit.faults.includes("persist")) {
      // The request dies here: the entry and its write are the object's, and a retry (or the
      // alarm) writes them.
      throw new Error("injected fault: persist");
    }
    const entry = this.store.entry(answer.sequence);
    if (!entry) throw new Error(`ledger ${orgId}: entry ${answer.sequence} vanished`);
    return this.answerFor(entry, false);
  }

  /** The entry an earlier commit under one of these keys made. */
  private earlierOf(once: readonly string[]): StoredEntry | undefined {
    for (const key of once) {
      const earlier = this.store.onceEntry(key);
      if (earlier) return earlier;
    }
    return undefined;
  }

  /** A commit's answer, once its write has reached Postgres (written now if it had not). */
  private async answerFor(entry: StoredEntry, replayed: boolean): Promise<CommitAnswer> {
    const write = this.store.write(entry.sequence);
    if (!write) return { kind: "expired", assessmentId: entry.subject?.id ?? null };
    await this.flushThrough(entry.sequence);
    const status = this.store.write(entry.sequence)?.status;
    if (status === "refused") return { kind: "refused" };
    if (status !== "stored") {
      throw new Error(`ledger ${this.orgId}: assessment write ${entry.sequence} is ${status}`);
    }
    return {
      kind: "stored",
      record: recordOf(JSON.parse(write.body) as AnsweredPlan, entry),
      replayed,
    };
  }

  /**
   * Which verdict to answer: the model's (0), or for a credential-backed approval the ledger
   * refuses, `already_consumed` (1: this root's transaction was approved before) or
   * `budget_exceeded` (2: the approved total would pass an open mandate's budget, or its
   * recurrence allows no more uses). Synchronous: part of the critical section.
   */
  private spendChoice(commit: AssessmentCommit): 0 | 1 | 2 {
    const spend = commit.spend;
    if (!spend || commit.verdict.fields.decision !== "approve") return 0;
    const spent = this.store.spent(spend.root, spend.transaction, spend.currency);
    if (spent.consumedBy !== null) return 1;
    const overBudget = spend.budgets.some(
      (budget) => budget.currency === spend.currency && spent.total + spend.amount > budget.max,
    );
    const exhausted = spend.maxOccurrences !== null && spent.uses >= spend.maxOccurrences;
    return overBudget || exhausted ? 2 : 0;
  }

  /** Builds, proves consistent, signs and stores a checkpoint over everything appended so far. */
  async anchor(orgId: string): Promise<CheckpointRecord | null> {
    this.bind(orgId);
    this.anchoring ??= this.checkpoint(orgId).finally(() => {
      this.anchoring = null;
    });
    return this.anchoring;
  }

  override async alarm(): Promise<void> {
    this.alarmSet = false;
    const orgId = this.orgId;
    if (!orgId) return;
    await this.flushThrough(this.head?.sequence ?? 0);
    await this.anchor(orgId);
    this.store.pruneAttachments(Date.now() - ATTACHMENT_TTL_MS);
  }

  /** An inclusion proof for one entry against the newest checkpoint, or null while pending. */
  inclusion(sequence: number): InclusionAnswer | null {
    const checkpoint = this.store.latestCheckpoint();
    const entry = this.store.entry(sequence);
    if (!checkpoint || !entry || sequence > checkpoint.tree_size) return null;
    return {
      sequence,
      leaf_index: sequence - 1,
      leaf_hash: entry.leaf_hash,
      tree_size: checkpoint.tree_size,
      audit_path: inclusionProof(this.store.nodes, sequence - 1, checkpoint.tree_size),
      checkpoint,
    };
  }

  /**
   * Inclusion proofs of several entries against one checkpoint, the newest: taken in one
   * synchronous step, so no anchoring can slip in between them. Null while any is pending.
   */
  inclusions(sequences: number[]): InclusionAnswer[] | null {
    const answers = sequences.map((sequence) => this.inclusion(sequence));
    return answers.every((answer) => answer !== null) ? (answers as InclusionAnswer[]) : null;
  }

  /** An RFC 6962 consistency proof between two tree sizes this ledger has reached. */
  consistency(oldSize: number, newSize: number): string[] | null {
    const head = this.head?.sequence ?? 0;
    if (oldSize < 0 || oldSize > newSize || newSize > head) return null;
    return consistencyProof(this.store.nodes, oldSize, newSize);
  }

  private bind(orgId: string): void {
    if (this.orgId === undefined) {
      this.store.setMeta("org_id", orgId);
      this.orgId = orgId;
    } else if (this.orgId !== orgId) {
      throw new Error("ledger bound to another organization");
    }
  }

  // Synchronous by design: the whole critical section of sequencing has no await in it.
  private sequence(orgId: string, input: AppendInput, head: Head | null): [Appended, Head | null] {
    const earlier = input.once === undefined ? undefined : this.store.onceEntry(input.once);
    if (earlier) {
      const { id, sequence, hash } = earlier;
      return [{ entry_id: id, sequence, hash, status: "pending" }, head];
    }
    const sequence = (head?.sequence ?? 0) + 1;
    const prev = head?.hash ?? GENESIS_HASH;
    const now = new Date();
    // Time never runs backwards along the chain, whatever the clock does.
    const time = head && head.time > now.toISOString() ? head.time : now.toISOString();
    const { type, actor, subject, digest } = input;
    const id = newId(now.getTime());
    const entry: LedgerEntry = {
      v: 1,
      org_id: orgId,
      sequence,
      id,
      type,
      actor,
      subject,
      digest,
      time,
    };
    const hash = entryHash(prev, entry);
    const leaf = leafHash(hash);
    const stored: StoredEntry = {
      ...{ sequence, id, type, actor, subject, digest, time },
      ...{ prev_hash: prev, hash, leaf_hash: leaf },
    };
    this.store.insertEntry(stored);
    if (input.once !== undefined) this.store.setOnce(input.once, sequence);
    appendLeaf(this.store.nodes, sequence - 1, leaf);
    return [
      { entry_id: id, sequence, hash, status: "pending" },
      { sequence, hash, time },
    ];
  }

  /**
   * Group commit: one write is in flight at a time; appends that arrive meanwhile wait for it
   * and go out together in the next one, in sequence order.
   */
  private async flushThrough(sequence: number): Promise<void> {
    while (this.flushed < sequence || this.checkpointsPending) {
      this.flight ??= this.flushOnce().finally(() => {
        this.flight = null;
      });
      await this.flight;
    }
  }

  private async flushOnce(): Promise<void> {
    const orgId = this.orgId;
    if (!orgId) return;
    let entries = this.store.entriesAfter(this.flushed, FLUSH_BATCH);
    let through = entries.at(-1)?.sequence ?? this.flushed;
    // The assessments sequenced meanwhile go in the same transaction as their entries.
    const writes = this.store
      .writesBetween(this.flushed, through, FLUSH_WRITES)
      .map((w) => ({ sequence: w.sequence, plan: JSON.parse(w.body) as PersistPlan }));
    if (writes.length === FLUSH_WRITES) {
      through = (writes.at(-1) as { sequence: number }).sequence;
      entries = entries.filter((e) => e.sequence <= through);
    }
    const checkpoints = this.store.unflushedCheckpoints(through);
    if (entries.length === 0 && checkpoints.length === 0) return;
    const entryAt = new Map(entries.map((e) => [e.sequence, e]));
    const results = await writeToPostgres(this.env, orgId, entries, checkpoints, (db) =>
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
    this.ctx.storage.transactionSync(() => {
      this.store.setMeta("flushed", String(this.flushed));
      this.store.markCheckpointsFlushed(checkpoints.map((c) => c.tree_size));
      writes.forEach((w, i) => {
        const status = persistedOf(results[i], w.plan);
        // A retry is answered from the record alone: the mandate and the inputs go, and so does
        // the counterparty's digest, which only the history reads (from Postgres).
        const kept: AnsweredPlan = { record: { ...w.plan.record, counterparty: null } };
        this.store.setWriteStatus(w.sequence, status, JSON.stringify(kept));
        // A spend whose assessment the cap refused never happened.
        if (status !== "stored") this.store.removeSpend(w.sequence);
      });
    });
    this.checkpointsPending = this.store.hasUnflushedCheckpoints();
    const made = results[writes.length] as { rows: DeliveryMessage[] } | undefined;
    if (made && made.rows.length > 0) {
      this.ctx.waitUntil(
        send(this.env, made.rows).catch((error) =>
          logError("webhook enqueue failed", { error: String(error) }),
        ),
      );
    }
  }

  private async scheduleAnchor(): Promise<void> {
    if (this.alarmSet) return;
    this.alarmSet = true;
    if ((await this.ctx.storage.getAlarm()) === null) {
      await this.ctx.storage.setAlarm(Date.now() + anchorDelay(this.env));
    }
  }

  private async checkpoint(orgId: string): Promise<CheckpointRecord | null> {
    const size = this.head?.sequence ?? 0;
    const previous = this.store.latestCheckpoint();
    if (size === 0 || previous?.tree_size === size) {
      await this.flushThrough(size);
      return previous ?? null;
    }
    const root = rootAt(this.store.nodes, size);
    const previousSize = previous?.tree_size ?? 0;
    const proof = previous ? consistencyProof(this.store.nodes, previousSize, size) : [];
    // Never sign a head that does not extend the last one: that would fork the log.
    if (previous && !verifyConsistency(previousSize, size, previous.root_hash, root, proof)) {
      throw new Error(
        `ledger ${orgId}: tree of size ${size} is not consistent with the last checkpoint`,
      );
    }
    const logId = logIdFor(orgId);
    const time = new Date().toISOString();
    const note = checkpointNote({ logId, treeSize: size, rootHash: root, time });
    const jws = await (await signer(this.env)).signBytes(
      new TextEncoder().encode(note),
      "tlog-checkpoint",
    );
    const record: CheckpointRecord = {
      log_id: logId,
      tree_size: size,
      root_hash: root,
      time,
      note,
      jws,
      previous_tree_size: previousSize,
      consistency_proof: proof,
    };
    this.store.insertCheckpoint(record);
    this.checkpointsPending = true;
    await this.flushThrough(size);
    return record;
  }
}
