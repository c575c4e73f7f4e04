import type { AssessmentCommit, CommitAnswer } from "../assess/commit";
import type { Actor, Caller } from "../auth/caller";
import type { SpendRefusal } from "../credentials/spend";
import type { Env } from "../env";
import { ApiError, type ErrorCode, errorStatus } from "../errors";
import { payloadDigest } from "../lib/digest";
import type { ReviewSpend } from "../schemas/reviews";
import type { Party } from "./chain";
import { LEDGER_UNAVAILABLE } from "./ledger-postgres";
import type { StoredEntry, Voiding } from "./ledger-store";
import { ledgerLocationHint } from "./location-hint";
import type {
  Appended,
  DeferredAppend,
  DeferredInput,
  DeferredRule,
  OrgLedger,
  Refusal,
} from "./org-ledger";

/** A state change to record: what happened, to what, and the payload it is a digest of. */
export interface Change {
  type: string;
  subject: Party | null;
  /** Hashed (RFC 8785 + SHA-256) into the entry; never stored in the ledger itself. */
  payload: unknown;
  /** Records the change at most once per org under this key (see AppendInput.once). */
  once?: string;
}

export function ledgerOf(env: Env, orgId: string): DurableObjectStub<OrgLedger> {
  if (!env.ORG_LEDGER) throw new ApiError("ledger_unavailable");
  const locationHint = ledgerLocationHint(env.LEDGER_LOCATION_HINT);
  const id = env.ORG_LEDGER.idFromName(orgId);
  return locationHint ? env.ORG_LEDGER.get(id, { locationHint }) : env.ORG_LEDGER.get(id);
}

function actorParty(actor: Actor): Party {
  return { type: actor.type, id: actor.id };
}

/**
 * The one call every state change makes: appends to the caller's org ledger and returns once
 * the entries are in Postgres, sequenced and hash-chained.
 */
export async function record(env: Env, caller: Caller, ...changes: Change[]): Promise<Appended[]> {
  return recordAs(env, caller.orgId, actorParty(caller.actor), ...changes);
}

/**
 * `record` for a change no tenant credential made (a payment provider's signed webhook): the
 * actor is named explicitly.
 */
export async function recordAs(
  env: Env,
  orgId: string,
  actor: Party,
  ...changes: Change[]
): Promise<Appended[]> {
  const inputs = changes.map((change) => ({
    type: change.type,
    actor,
    subject: change.subject,
    digest: payloadDigest(change.payload),
    ...(change.once === undefined ? {} : { once: change.once }),
  }));
  return reachLedger(() => ledgerOf(env, orgId).append(orgId, inputs));
}

/**
 * `record` for a revocation that voids grants: the org's ledger object appends it and voids
 * `voids.key` in one step, so every redemption it sequences later is refused and every one it
 * sequenced before has a lower sequence (OrgLedger.revoke). Recorded once per `once` key.
 */
export async function recordRevocation(
  env: Env,
  caller: Caller,
  change: Change & { once: string },
  voids: { key: string; at: string },
): Promise<Appended> {
  const input = {
    type: change.type,
    actor: actorParty(caller.actor),
    subject: change.subject,
    digest: payloadDigest(change.payload),
    once: change.once,
  };
  return reachLedger(() => ledgerOf(env, caller.orgId).revoke(caller.orgId, input, voids));
}

/** A deferred append under the plain rule, which nothing refuses: the entry to write. */
export async function sequenceDeferred(
  env: Env,
  orgId: string,
  input: DeferredInput,
): Promise<DeferredAppend> {
  const answer = await appendDeferred(env, orgId, input, { kind: "plain" });
  if (!("entry" in answer)) throw new Error(`ledger ${orgId}: a plain append was refused`);
  return answer;
}

/**
 * Has the org's ledger object sequence a deferred append under `rule` (OrgLedger.appendDeferred):
 * the entry to write, or the refusal the rule made.
 */
export function appendDeferred(
  env: Env,
  orgId: string,
  input: DeferredInput,
  rule: DeferredRule,
): Promise<DeferredAppend | Refusal> {
  // The one cast: the RPC stub types a union answer as a union of its serialized forms, not
  // the union itself; every member is plain data, which RPC carries unchanged.
  return reachLedger(
    () =>
      ledgerOf(env, orgId).appendDeferred(orgId, input, rule) as unknown as Promise<
        DeferredAppend | Refusal
      >,
  );
}

/** What a deferred append settled on: its entry, and the terms that entry records. */
export interface Sequenced<T> {
  entry: StoredEntry;
  /** This call's terms, or on a replay the first caller's, whose write this call finishes. */
  terms: T;
  /** An earlier append under one of the keys made the entry: no new entry was added. */
  replayed: boolean;
}

/** `expired` answers this when the first writer died before writing: go past its entry. */
export const ORPHANED = Symbol("orphaned");

/** After this many orphaned entries in a row for one change, give up (503). */
const MAX_ORPHANS = 5;

/**
 * Records a change exactly once per `once` key, deferred: the ledger object sequences it and
 * keeps `terms` for a day, and `finish` writes the entry in the transaction that stores the
 * change. A retry or a racing duplicate gets the first caller's terms (`replayed`), so every
 * caller finishes the same write and answers the same result.
 *
 * When the first caller's terms have expired, `expired(entry)` decides: it answers the stored
 * result (the first write landed), throws, or returns ORPHANED when the first writer died
 * before writing. The change is then recorded afresh under `<key>:after:<orphan sequence>`,
 * which every racing caller derives alike, so they still agree on one entry; the orphan stays
 * in the ledger as the trace of the lost attempt.
 */
export async function recordOnce<T, R>(
  env: Env,
  caller: Caller,
  change: OnceChange,
  terms: T,
  settle: Settle<T, R>,
): Promise<R> {
  return recordOnceAs(env, caller.orgId, actorParty(caller.actor), change, terms, settle);
}

/** What `recordOnce` records: a change, its once keys, and what it may be refused by. */
export type OnceChange = Omit<Change, "once"> & {
  once: readonly string[];
  voidedBy?: readonly string[];
  /**
   * An approval that spends under an AP2 credential: the ledger object judges it (single use,
   * budget) in the step that sequences it, in the mode of the item approved, and sequences
   * nothing when it refuses.
   */
  spend?: { terms: ReviewSpend; livemode: boolean };
  /**
   * A deadline (epoch ms, a review's SLA): the ledger object refuses the change when it would
   * sequence it at or after this instant, and sequences nothing.
   */
  notAfter?: number;
};

export interface Settle<T, R> {
  finish: (sequenced: Sequenced<T>) => Promise<R>;
  expired: (entry: StoredEntry) => Promise<R | typeof ORPHANED>;
  /** A `voidedBy` key was revoked before this change could be sequenced: nothing was. */
  voided?: (revocation: Voiding) => Promise<R>;
  /** The ledger object refused `spend`: nothing was sequenced. */
  refused?: (refusal: SpendRefusal) => Promise<R>;
  /** The change reached the ledger object at or after `notAfter`: nothing was sequenced. */
  late?: () => Promise<R>;
}

/**
 * `recordOnce` for a change no request's caller made (the review SLA sweep): the actor is
 * named explicitly.
 */
export async function recordOnceAs<T, R>(
  env: Env,
  orgId: string,
  actor: Party,
  change: OnceChange,
  terms: T,
  settle: Settle<T, R>,
): Promise<R> {
  let once = change.once;
  const voidedBy = change.voidedBy ?? [];
  for (let orphans = 0; ; orphans++) {
    const input = {
      type: change.type,
      actor,
      subject: change.subject,
      digest: payloadDigest(change.payload),
      once: [...once],
      attachment: JSON.stringify(terms),
    };
    const answer = await appendDeferred(env, orgId, input, ruleOf(change, voidedBy));
    if ("voided" in answer) {
      if (!settle.voided) throw new Error("a voided change needs settle.voided");
      return settle.voided(answer.voided);
    }
    if ("refused" in answer) {
      if (!settle.refused) throw new Error("a refused spend needs settle.refused");
      return settle.refused(answer.refused);
    }
    if ("late" in answer) {
      if (!settle.late) throw new Error("a change with a deadline needs settle.late");
      return settle.late();
    }
    const { entry, replayed, attachment } = answer;
    if (!replayed) return settle.finish({ entry, terms, replayed });
    if (attachment !== null) {
      // Our own JSON, written by the first caller of these keys.
      return settle.finish({ entry, terms: JSON.parse(attachment) as T, replayed });
    }
    const settled = await settle.expired(entry);
    if (settled !== ORPHANED) return settled;
    if (orphans + 1 >= MAX_ORPHANS) throw new ApiError("ledger_unavailable");
    once = change.once.map((key) => `${key}:after:${entry.sequence}`);
  }
}

/** The rule the ledger object judges a once-change by: what can refuse it, if anything. */
function ruleOf(change: OnceChange, voidedBy: readonly string[]): DeferredRule {
  const { spend, notAfter } = change;
  if (spend) {
    return {
      kind: "spending",
      spend: spend.terms,
      livemode: spend.livemode,
      ...(notAfter === undefined ? {} : { notAfter }),
    };
  }
  if (notAfter !== undefined) return { kind: "before", notAfter };
  if (voidedBy.length > 0) return { kind: "unless_voided", voidedBy: [...voidedBy] };
  return { kind: "plain" };
}

/**
 * The second and last hop of a fresh assessment: the org's ledger object signs the verdict it
 * chooses, sequences it and writes the assessment with its entry (OrgLedger.commitAssessment).
 */
export function commitAssessment(
  env: Env,
  caller: Caller,
  commit: AssessmentCommit,
): Promise<CommitAnswer> {
  // The RPC stub's type of a union answer is not the union itself.
  return reachLedger(
    () =>
      ledgerOf(env, caller.orgId).commitAssessment(
        caller.orgId,
        commit,
      ) as unknown as Promise<CommitAnswer>,
  );
}

/** Has the org's ledger sign a checkpoint over everything appended so far (stored before it returns). */
export function anchorNow(env: Env, orgId: string) {
  return reachLedger(() => ledgerOf(env, orgId).anchor(orgId));
}

/** Calls the org's ledger object, naming its database outage a 503 (read paths use it too). */
export async function reachLedger<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    // Our own answer (no ledger binding: `ledger_unavailable`) passes through as it is.
    if (error instanceof ApiError) throw error;
    // Errors lose their class across RPC; the ledger names a database outage in the message.
    if (error instanceof Error && error.message.startsWith(LEDGER_UNAVAILABLE)) {
      throw new ApiError("database_unavailable", undefined, { cause: error });
    }
    // The ledger object's own ApiErrors (its signing key unusable) arrive as their code.
    if (error instanceof Error && Object.hasOwn(errorStatus, error.message)) {
      throw new ApiError(error.message as ErrorCode, undefined, { cause: error });
    }
    throw error;
  }
}
