import type { Actor, Caller } from "../auth/caller";
import type { Env } from "../env";
import { ApiError } from "../errors";
import { payloadDigest } from "../lib/digest";
import type { Party } from "./chain";
import { LEDGER_UNAVAILABLE } from "./ledger-postgres";
import type { Appended, DeferredAppend, OrgLedger } from "./org-ledger";

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
  return env.ORG_LEDGER.get(env.ORG_LEDGER.idFromName(orgId));
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
 * Sequences a change without waiting for Postgres (see OrgLedger.appendDeferred): the caller
 * writes the returned entry in the same transaction as the change itself.
 */
export function recordDeferred(
  env: Env,
  caller: Caller,
  change: Omit<Change, "once"> & { once: string[] },
  attachment: string,
): Promise<DeferredAppend> {
  const input = {
    type: change.type,
    actor: actorParty(caller.actor),
    subject: change.subject,
    digest: payloadDigest(change.payload),
    once: change.once,
    attachment,
  };
  return reachLedger(() => ledgerOf(env, caller.orgId).appendDeferred(caller.orgId, input));
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
    throw error;
  }
}
