import { DurableObject } from "cloudflare:workers";
import type { CheckpointRecord } from "#audit/checkpoint";
import { consistencyProof } from "#audit/merkle";
import type { SpendRefusal } from "../ap2-credentials/spend";
import type { AssessmentCommit, CommitAnswer, Verdict } from "../assess/commit";
import type { AnsweredPlan, PersistPlan } from "../assess/persist";
import { type Env, modeOf } from "../env";
import { AnchorAlarm, signCheckpoint } from "../ledger/anchoring";
import { type InclusionAnswer, inclusionOf } from "../ledger/inclusion";
import { LedgerStore, type StoredEntry, type Voiding } from "../ledger/ledger-store";
import {
  type Appended,
  type AppendInput,
  sequenceEntry,
  sequenceUnder,
} from "../ledger/sequencing";
import type { ReviewSpend } from "../schemas/reviews";
import { signer } from "../signing/signer";
import { statusClaim } from "../status-lists/indices";
import { commitChosen, sequenceAssessment, signVerdict, whileSpending } from "./assessment-commit";
import { commitAnswer, earlierCommit } from "./assessment-write";
import { CriticalSections } from "./critical-sections";
import { GroupCommit } from "./group-commit";
import {
  candidateVerdicts,
  type MandateBudgetState,
  mandateBudgetOf,
  spendChoice,
  spendRefusal,
  termsOf,
} from "./spend-decision";

export { ANCHOR_DELAY_MS, anchorDelay } from "../ledger/anchoring";
export type { InclusionAnswer } from "../ledger/inclusion";
export type { Appended, AppendInput } from "../ledger/sequencing";

/** A change with a deadline (`notAfter`, epoch ms) that reached the ledger after it: nothing was sequenced. */
export interface TooLate {
  late: true;
}

/** What `appendDeferred` answers unless its rule refused: the entry to write, and whether an earlier append made it. */
export interface DeferredAppend {
  entry: StoredEntry;
  /** True when the `once` key had been used: `entry` and `attachment` are the first append's. */
  replayed: boolean;
  /** The first append's attachment on a replay (null once it has expired). */
  attachment: string | null;
}

/** What a deferred append hands the ledger object: the entry's content, its keys, the caller's terms. */
export type DeferredInput = Omit<AppendInput, "once"> & { once: string[]; attachment: string };

/** What a deferred append is judged by in the step that would sequence it (see appendDeferred). */
export type DeferredRule =
  | { kind: "plain" }
  | { kind: "unless_voided"; voidedBy: string[] }
  | { kind: "before"; notAfter: number }
  /** A revocation: voids `voids.key` with the entry's sequence (see `unless_voided`). */
  | { kind: "revoking"; voids: { key: string; at: string } }
  | {
      kind: "spending";
      spend: ReviewSpend;
      /** The mode of the item approved: its spend is judged and kept in that mode only. */
      livemode: boolean;
      notAfter?: number;
    };

/** What a rule may answer instead of an entry: nothing was sequenced. */
export type Refusal = { voided: Voiding } | { refused: SpendRefusal } | TooLate;

/** A rule as the sequencing step runs it: the deadline, the refusal, and its own writes. */
interface Judgement {
  notAfter?: number;
  /** Checked after a replay and the deadline, before sequencing: null lets the append go. */
  refusal: () => Refusal | null;
  /** Written in the sequencing transaction, with the entry's sequence. */
  also?: (sequence: number) => void;
}

/** How long a deferred append's attachment is kept for a retry or a racing duplicate. */
const ATTACHMENT_TTL_MS = 24 * 60 * 60 * 1000;

/**
 * The sequencer of one organization's audit ledger (one instance per org, by name). It alone
 * assigns sequence numbers: the chain head lives in its own SQLite storage and every append
 * computes its hash synchronously (`sequencing.ts`), so no two appends can interleave. Entries
 * reach Postgres by group commit before an append returns (`group-commit.ts`); checkpoints are
 * built by the alarm (and the Cron sweep), signed, and flushed the same way (`anchoring.ts`).
 */
export class OrgLedger extends DurableObject<Env> {
  private readonly store: LedgerStore;
  private readonly commits: GroupCommit;
  private readonly alarmClock: AnchorAlarm;
  /** Where sequences are assigned, with the chain head they move. */
  private readonly sections: CriticalSections;
  // In-memory mirrors of what storage holds, read once at activation: the hot path of an
  // append then touches SQLite only to write.
  private orgId: string | undefined;
  /**
   * The spends signed but not yet sequenced, per consent root: while another is in flight
   * under the same root, a commit's spend choice may change before its turn, so it signs every
   * candidate (commitAssessment).
   */
  private readonly spending = new Map<string, number>();
  private anchoring: Promise<CheckpointRecord | null> | null = null;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.store = new LedgerStore(ctx.storage.sql);
    this.sections = new CriticalSections(ctx.storage, () => this.commits, this.store.head());
    this.orgId = this.store.meta("org_id");
    this.commits = new GroupCommit({
      storage: ctx.storage,
      store: this.store,
      env: () => this.env,
      orgId: () => this.orgId,
      waitUntil: (promise) => ctx.waitUntil(promise),
      beforeWrite: () => this.sections.runQueued(),
    });
    this.alarmClock = new AnchorAlarm(ctx.storage, () => this.env);
    // Reconcile: a crash between the local commit and the Postgres write left a backlog. The
    // alarm writes it out (and anchors it) even if no further append ever arrives.
    if (this.commits.hasBacklog(this.sections.head?.sequence ?? 0)) this.alarmClock.now();
  }

  /**
   * Appends entries in order and returns once Postgres has them: the group commit on its own,
   * which the ledger benchmark and tests drive. The service's changes never call it: they
   * commit their entries with their writes (`appendDeferred`, ledger/commit.ts) or with the
   * assessment (`commitAssessment`).
   */
  async append(orgId: string, inputs: AppendInput[]): Promise<Appended[]> {
    this.bind(orgId);
    const appended = await this.sections.inTurn((from) => {
      let head = from;
      const answers = inputs.map((input) => {
        const [answer, next] = sequenceEntry(this.store, orgId, input, head);
        head = next;
        return answer;
      });
      return [answers, head];
    });
    const last = Math.max(0, ...appended.map((a) => a.sequence));
    try {
      await this.commits.through(last);
    } finally {
      // Even when the write failed: the alarm retries it, so the entries reach Postgres anyway.
      await this.alarmClock.schedule();
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
   *
   * `rule` says what else the sequencing step judges, always after a replay by the `once` keys
   * (a first redemption or approval is still the first):
   * - `plain`: nothing; the entry is sequenced.
   * - `unless_voided` (a grant's redemption): refused if any `voidedBy` key was revoked; the
   *   answer is then the revocation.
   * - `before` (a review's SLA): refused when the step runs at or after `notAfter`.
   * - `revoking` (a mandate's or an agent's revocation): voids `voids.key` with the entry's
   *   sequence, so a redemption sequenced after it is refused and one sequenced before it has
   *   a lower sequence: a revocation and a redemption are ordered by the ledger, whatever
   *   their requests read before.
   * - `spending` (a person approving a review under an AP2 credential): the spend is judged like
   *   an automated approval's (one consent pays once, budgets and recurrence across closed
   *   mandates) and recorded with the entry; also refused past an optional `notAfter`.
   * A refused append sequences nothing.
   */
  async appendDeferred(
    orgId: string,
    input: DeferredInput,
    rule: DeferredRule = { kind: "plain" },
  ): Promise<DeferredAppend | Refusal> {
    return await this.deferred(orgId, input, this.judge(rule));
  }

  /** What the sequencing step checks and writes for `rule`, over this object's own store. */
  private judge(rule: DeferredRule): Judgement {
    switch (rule.kind) {
      case "plain":
        return { refusal: () => null };
      case "before":
        return { notAfter: rule.notAfter, refusal: () => null };
      case "revoking":
        return {
          refusal: () => null,
          also: (sequence) => this.store.setVoiding({ ...rule.voids, sequence }),
        };
      case "unless_voided":
        return {
          refusal: () => {
            for (const key of rule.voidedBy) {
              const voided = this.store.voiding(key);
              if (voided) return { voided };
            }
            return null;
          },
        };
      case "spending": {
        const { spend, livemode, notAfter } = rule;
        // An item opened before period caps has no `at`: it counts at its approval.
        const approvedAt = Date.now();
        return {
          ...(notAfter === undefined ? {} : { notAfter }),
          refusal: () => {
            const refused = spendRefusal(this.store, livemode, spend, approvedAt);
            return refused === null ? null : { refused };
          },
          also: (sequence) => {
            const { root, transaction, amount, currency } = spend;
            const at = spend.at ?? approvedAt;
            this.store.addSpend(livemode, root, transaction, amount, currency, sequence, at);
            this.store.setConsentTerms(livemode, root, termsOf(spend));
          },
        };
      }
    }
  }

  /**
   * The deferred appends' one step, with no await before its transaction: the once keys (a
   * replay answers the first append), the deadline, `rule`'s refusal and the sequencing, with
   * the attachment and `rule`'s own writes, are one synchronous step.
   */
  private async deferred(
    orgId: string,
    input: DeferredInput,
    rule: Judgement,
  ): Promise<DeferredAppend | Refusal> {
    this.bind(orgId);
    // Several keys, one entry: the first key already used names the earlier append.
    const earlier = earlierCommit(this.store, input.once);
    if (earlier) {
      return {
        entry: earlier,
        replayed: true,
        attachment: this.store.attachment(earlier.sequence),
      };
    }
    // Past its deadline (a review's SLA) a change is refused in the sequencing step itself, so
    // a request that checked the deadline on arrival cannot land after it.
    if (rule.notAfter !== undefined && Date.now() >= rule.notAfter) return { late: true };
    const refused = rule.refusal();
    if (refused !== null) return refused;
    const entry = this.sections.now((head) => {
      const sequenced = sequenceUnder(this.store, orgId, input, input.once, head);
      const { sequence } = sequenced[0];
      this.store.setAttachment(sequence, input.attachment, Date.now());
      rule.also?.(sequence);
      return sequenced;
    });
    await this.alarmClock.schedule();
    return { entry, replayed: false, attachment: null };
  }

  /**
   * Commits a fresh assessment (docs/architecture.md, "The assess path"): the second and last
   * hop of `POST /v1/assess`. Under its keys, once: a retry or a racing duplicate gets the first
   * commit's answer. The candidate verdicts are signed first; then, in one synchronous critical
   * section, a credential-backed approval is checked against what this org approved before
   * under the same open mandate (one consent pays once, budgets and recurrence across closed
   * mandates), the chosen verdict is sequenced with its write, and the spend recorded
   * (`assessment-commit.ts`, which also says when a commit signs more than one candidate). The
   * answer waits for the group commit that writes the entry and the assessment together.
   */
  async commitAssessment(orgId: string, commit: AssessmentCommit): Promise<CommitAnswer> {
    this.bind(orgId);
    // Refused here, not in the section: a throw there would fail every commit of its batch.
    if (commit.once.length === 0) throw new Error("commitAssessment needs a once key");
    const candidates = candidateVerdicts(commit);
    // Signatures are made before the critical section, which must not await. The context read
    // answers a duplicate whose write is in Postgres; one reaches here only when Postgres has
    // not answered its first commit yet (a race, or a retry after a failed or refused write),
    // so the keys are looked up once, in the section, and such a duplicate signs before it
    // finds the earlier entry.
    const key = await signer(this.env);
    // The verdict's place in the org's status list (docs/status-lists.md, "Issued"): taken from
    // the object's counter now, before the signature; a duplicate found in the section leaves
    // its place unused (VALID, like every place never taken).
    const status = statusClaim(this.env, orgId, {
      kind: "verdict",
      counter: this.store.nextStatusCounter(),
    });
    const root = commit.spend?.root ?? null;
    const committed = await whileSpending(this.spending, root, (racing) =>
      commitChosen<{ entry: StoredEntry; plan?: PersistPlan }>({
        candidates: candidates.length,
        racing,
        choose: () => spendChoice(this.store, commit),
        sign: (choice) => signVerdict(key, candidates[choice] as Verdict, status),
        earlier: () => {
          const entry = earlierCommit(this.store, commit.once);
          return entry && { entry };
        },
        sequence: (choice, signature, head) => {
          const verdict = candidates[choice] as Verdict;
          const chosen = { choice, verdict, signature, kid: key.kid };
          const ledger = { store: this.store, commits: this.commits };
          return sequenceAssessment(ledger, orgId, commit, chosen, head);
        },
        inTurn: (section) => this.sections.inTurn(section),
      }),
    );
    const { entry, plan } = committed;
    if (!plan) return this.answerFor(entry);
    await this.alarmClock.schedule();
    if (modeOf(this.env) === "test" && commit.faults.includes("persist")) {
      // The request dies here: the entry and its write are the object's, and a retry (or the
      // alarm) writes them.
      throw new Error("injected fault: persist");
    }
    // Answered from the plan in hand: the write it was stored as need not be read back.
    return commitAnswer(this.store, orgId, entry, plan, false, (sequence) =>
      this.commits.through(sequence),
    );
  }

  /** An earlier commit's answer, from the write the object keeps of it while it keeps one. */
  private answerFor(entry: StoredEntry): Promise<CommitAnswer> {
    const write = this.store.write(entry.sequence);
    if (!write) {
      return Promise.resolve({ kind: "expired", assessmentId: entry.subject?.id ?? null });
    }
    const answered = JSON.parse(write.body) as AnsweredPlan;
    return commitAnswer(this.store, this.orgId, entry, answered, true, (sequence) =>
      this.commits.through(sequence),
    );
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
    this.alarmClock.fired();
    const orgId = this.orgId;
    if (!orgId) return;
    await this.commits.through(this.sections.head?.sequence ?? 0);
    await this.anchor(orgId);
    this.store.pruneAttachments(Date.now() - ATTACHMENT_TTL_MS);
  }

  /** An inclusion proof for one entry against the newest checkpoint, or null while pending. */
  inclusion(sequence: number): InclusionAnswer | null {
    return inclusionOf(this.store, sequence);
  }

  /**
   * Inclusion proofs of several entries against one checkpoint, the newest: taken in one
   * synchronous step, so no anchoring can slip in between them. Null while any is pending.
   */
  inclusions(sequences: number[]): InclusionAnswer[] | null {
    const answers = sequences.map((sequence) => this.inclusion(sequence));
    return answers.every((answer) => answer !== null) ? (answers as InclusionAnswer[]) : null;
  }

  /**
   * What remains of an open mandate's budget in one mode, at `at` (epoch ms): the terms its last
   * approved payment was judged under and the approved totals, overall and in each capped
   * period. Null when no payment under the consent was approved in this mode.
   */
  mandateBudget(livemode: boolean, consent: string, at: number): MandateBudgetState | null {
    return mandateBudgetOf(this.store, livemode, consent, at);
  }

  /** An RFC 6962 consistency proof between two tree sizes this ledger has reached. */
  consistency(oldSize: number, newSize: number): string[] | null {
    const head = this.sections.head?.sequence ?? 0;
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

  private async checkpoint(orgId: string): Promise<CheckpointRecord | null> {
    const size = this.sections.head?.sequence ?? 0;
    const previous = this.store.latestCheckpoint();
    if (size === 0 || previous?.tree_size === size) {
      await this.commits.through(size);
      return previous ?? null;
    }
    const record = await signCheckpoint(this.env, this.store, orgId, size, previous);
    this.commits.checkpointAdded();
    await this.commits.through(size);
    return record;
  }
}
