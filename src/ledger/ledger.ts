import type { Actor, Caller } from "../auth/caller";
import type { Env } from "../env";
import type { Party } from "./chain";
import { payloadDigest } from "./digest";
import type { Appended, OrgLedger } from "./org-ledger";

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
  if (!env.ORG_LEDGER) throw new Error("ORG_LEDGER binding missing");
  return env.ORG_LEDGER.get(env.ORG_LEDGER.idFromName(orgId));
}

export function actorParty(actor: Actor): Party {
  return { type: actor.type, id: actor.id };
}

/**
 * The one call every state change makes: appends to the caller's org ledger and returns once
 * the entries are in Postgres, sequenced and hash-chained.
 */
export async function record(env: Env, caller: Caller, ...changes: Change[]): Promise<Appended[]> {
  const actor = actorParty(caller.actor);
  const inputs = changes.map((change) => ({
    type: change.type,
    actor,
    subject: change.subject,
    digest: payloadDigest(change.payload),
    ...(change.once === undefined ? {} : { once: change.once }),
  }));
  return ledgerOf(env, caller.orgId).append(caller.orgId, inputs);
}
