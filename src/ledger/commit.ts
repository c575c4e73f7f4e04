import type { BatchResponse } from "drizzle-orm/batch";
import type { Party } from "#audit/chain";
import { payloadDigest } from "#audit/digest";
import type { SpendRefusal } from "../ap2-credentials/spend";
import type { Batch, BatchOptions } from "../auth/tenant";
import { type Database, database } from "../db/client";
import { auditEntries } from "../db/schema";
import type { Env } from "../env";
import { ApiError } from "../errors";
import { newId } from "../lib/ids";
import type { DeferredRule } from "../org-ledger/org-ledger";
import type { ReviewSpend } from "../schemas/reviews";
import { appendDeferred, type Change } from "./ledger";
import { auditEntryRow } from "./ledger-postgres";
import type { StoredEntry, Voiding } from "./ledger-store";

/**
 * Who commits: the org, the actor its ledger names, and the transaction the writes run in. A
 * request's Tenant is one; work no request's caller does (a provider's signed webhook, the
 * review SLA sweep) uses `orgActor` (auth/tenant.ts).
 */
export interface Committer {
  readonly env: Env;
  caller(): Promise<{ orgId: string; actor: Party }>;
  batch<T extends Batch>(
    build: (db: Database) => T,
    options?: BatchOptions,
  ): Promise<BatchResponse<T>>;
}

/** A change to commit: what happened, to what, its payload, and what makes it happen once. */
export interface Commit<Payload = unknown, Terms = Payload>
  extends Omit<Change, "once" | "payload"> {
  /** Hashed (RFC 8785 + SHA-256) into the entry; never stored in the ledger itself. */
  payload: Payload;
  /**
   * Keys under which the change is recorded once per org: a retry or a racing duplicate by any
   * of them gets the first entry (`replayed`) and the first committer's `terms`, and finishes
   * that write (so its writes must be idempotent). Without keys every call is a change of its own.
   */
  once?: readonly string[];
  /** What this committer sets out to write, kept a day for a replay (default: the payload). */
  terms?: Terms;
  /** Refused (`voided`) when any of these keys was revoked before the change is sequenced. */
  voidedBy?: readonly string[];
  /** A revocation: voids `key` in the step that sequences it, so later changes `voidedBy` it are refused. */
  voids?: { key: string; at: string };
  /**
   * An approval that spends under an AP2 credential: the ledger object judges it (single use,
   * budget) in the step that sequences it, in the mode of the item approved, and sequences
   * nothing when it refuses (`refused`).
   */
  spend?: { terms: ReviewSpend; livemode: boolean };
  /** A deadline (epoch ms, a review's SLA): sequenced only before it, else `late`. */
  notAfter?: number;
  /**
   * Changes the same write makes besides this one (a policy created active is also
   * activated): each is sequenced after it, under its own `once` key if any, and its entry
   * written in the same transaction.
   */
  also?: readonly Change[];
}

/** What the ledger object settled on: the entry, and the terms that entry records. */
export interface Sequenced<Terms> {
  entry: StoredEntry;
  /** This call's terms, or on a replay the first committer's, whose write this call finishes. */
  terms: Terms;
  /** An earlier commit under one of the `once` keys made the entry: no new entry was added. */
  replayed: boolean;
}

/** The statements a change writes with its entry (none: the entry is the whole record). */
export type Writes = readonly [] | Batch;

/** What a commit wrote: the sequenced entry and terms, and the writes' results. */
export interface Committed<T extends Writes, Terms = unknown> extends Sequenced<Terms> {
  results: BatchResponse<T>;
  /** The results of `options.before`, if any. */
  preceding: unknown[];
}

/** `expired` answers this when the first committer died before writing: go past its entry. */
export const ORPHANED = Symbol("orphaned");

/** After this many orphaned entries in a row for one change, give up (503). */
const MAX_ORPHANS = 5;

/** How a commit's transaction is made. */
export interface CommitOptions<Terms> extends BatchOptions {
  /**
   * Statements that must run before the entry is written: what the entry itself refers to (the
   * organization a founding creates), from the terms the entry records. Their results are
   * answered apart (`preceding`).
   */
  before?: (db: Database, sequenced: Sequenced<Terms>) => Batch;
}

/** The answers a commit gives instead of writing; each is needed only where it can happen. */
export interface Outcomes<R> {
  /**
   * A replay whose first terms have expired (a day later), under an entry of another payload
   * (one of this very payload is finished with this call's terms): answer what the first write stored,
   * or ORPHANED when it never landed; the change is then committed afresh under
   * `<key>:after:<orphan sequence>`, which every racing committer derives alike. Without it, a
   * replay finishes the write with this call's own terms.
   */
  expired?: (entry: StoredEntry) => Promise<R | typeof ORPHANED>;
  /** A `voidedBy` key was revoked first: nothing was sequenced or written. */
  voided?: (revocation: Voiding) => Promise<R>;
  /** The ledger object refused `spend`: nothing was sequenced or written. */
  refused?: (refusal: SpendRefusal) => Promise<R>;
  /** The change reached the ledger object at or after `notAfter`: nothing was sequenced. */
  late?: () => Promise<R>;
}

/**
 * The one way a change is recorded: the org's ledger object sequences `change` (without
 * waiting for Postgres), then the entry and the caller's `writes` go to Postgres in one
 * transaction in the committer's org, so no change lands without its ledger entry. The converse
 * does not hold: the ledger object writes every entry it sequenced too, later and
 * idempotently (a chain has no gaps), so when the transaction fails, or a conditional write in
 * it finds its condition false, the entry stays as the record of an attempt whose change did
 * not land. A change whose write is conditional therefore checks its condition before it
 * commits, and the race that is left (two callers between that check and the write) can leave
 * such an entry. `writes` sees the entry and the terms it records (a row may keep its id and
 * sequence; a replay writes the first committer's terms); it may throw to refuse them, before
 * anything is written. With `webhooks`, the events the writes make are delivered.
 */
export async function commit<T extends Writes, Payload, Terms = Payload, R = never>(
  committer: Committer,
  change: Commit<Payload, Terms>,
  writes: (db: Database, sequenced: Sequenced<Terms>) => T | Promise<T>,
  options: CommitOptions<Terms> & Outcomes<R> = {},
): Promise<Committed<T, Terms> | R> {
  const { orgId, actor } = await committer.caller();
  const terms = (change.terms === undefined ? change.payload : change.terms) as Terms;
  const keys = change.once?.length ? change.once : [`${change.type}:${newId()}`];
  let once = keys;
  for (let orphans = 0; ; orphans++) {
    const answer = await appendDeferred(
      committer.env,
      orgId,
      {
        type: change.type,
        actor: { type: actor.type, id: actor.id },
        subject: change.subject,
        digest: payloadDigest(change.payload),
        once: [...once],
        // Kept a day for a retry or a racing duplicate: what the first commit set out to write.
        attachment: JSON.stringify(terms),
      },
      ruleOf(change),
    );
    if ("voided" in answer) return settle(options.voided, "voided")(answer.voided);
    if ("refused" in answer) return settle(options.refused, "refused")(answer.refused);
    if ("late" in answer) return settle(options.late, "late")();
    const { entry, replayed, attachment } = answer;
    let first = terms;
    if (replayed && attachment !== null) {
      // Our own JSON, written by the first committer of these keys.
      first = JSON.parse(attachment) as Terms;
    } else if (replayed && options.expired && entry.digest !== payloadDigest(change.payload)) {
      const stored = await options.expired(entry);
      if (stored !== ORPHANED) return stored;
      if (orphans + 1 >= MAX_ORPHANS) throw new ApiError("ledger_unavailable");
      once = keys.map((key) => `${key}:after:${entry.sequence}`);
      continue;
    }
    const entries = [entry];
    for (const [i, also] of (change.also ?? []).entries()) {
      // Under the main change's keys when it has none of its own: a replay sequences nothing new.
      const key = also.once ?? (change.once?.length ? `${once[0]}:also:${i}` : undefined);
      entries.push(
        await sequencePlain(committer.env, orgId, actor, {
          ...also,
          ...(key === undefined ? {} : { once: key }),
        }),
      );
    }
    const sequenced = { entry, terms: first, replayed };
    const statements = await writes(database(committer.env), sequenced);
    const before = options.before;
    const all = await committer.batch(
      (db) =>
        [
          ...(before ? before(db, sequenced) : []),
          db
            .insert(auditEntries)
            .values(entries.map((e) => auditEntryRow(e)))
            .onConflictDoNothing(),
          ...statements,
        ] as unknown as Batch,
      { ...(options.webhooks ? { webhooks: true } : {}) },
    );
    const ours = all.length - statements.length;
    return {
      ...sequenced,
      results: all.slice(ours) as unknown as BatchResponse<T>,
      preceding: all.slice(0, ours - 1),
    };
  }
}

/** One more change of a commit, under the plain rule, which nothing refuses: its entry. */
async function sequencePlain(env: Env, orgId: string, actor: Party, change: Change) {
  const answer = await appendDeferred(
    env,
    orgId,
    {
      type: change.type,
      actor: { type: actor.type, id: actor.id },
      subject: change.subject,
      digest: payloadDigest(change.payload),
      once: [change.once ?? `${change.type}:${newId()}`],
      attachment: "null",
    },
    { kind: "plain" },
  );
  if (!("entry" in answer)) throw new Error(`ledger ${orgId}: a plain append was refused`);
  return answer.entry;
}

/** A refusal's answer, which a change that can be refused that way must provide. */
function settle<A extends unknown[], R>(
  outcome: ((...args: A) => Promise<R>) | undefined,
  name: string,
): (...args: A) => Promise<R> {
  if (!outcome) throw new Error(`a commit that can be ${name} needs options.${name}`);
  return outcome;
}

/** The rule the ledger object judges a change by: what can refuse it, and what it voids. */
function ruleOf(change: Commit): DeferredRule {
  const { spend, notAfter, voidedBy, voids } = change;
  if (spend) {
    return {
      kind: "spending",
      spend: spend.terms,
      livemode: spend.livemode,
      ...(notAfter === undefined ? {} : { notAfter }),
    };
  }
  if (notAfter !== undefined) return { kind: "before", notAfter };
  if (voidedBy?.length) return { kind: "unless_voided", voidedBy: [...voidedBy] };
  if (voids) return { kind: "revoking", voids };
  return { kind: "plain" };
}
