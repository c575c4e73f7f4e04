/**
 * Where the service's own revocable things sit in its status lists (docs/status-lists.md,
 * "Issued"; ADR issue 42 point 3). Each org has lists of LIST_SIZE entries; a thing's slot is
 * one of two counters the org's ledger object sequences, interleaved so they never meet:
 *
 * - a verdict: `2 × c + 1`, c from the object's status counter, taken in the commit that signs
 *   the Risk Payload (before the signature, which the critical section cannot await);
 * - an agent, agent key or grant: `2 × s`, s the sequence of the ledger entry that creates it.
 *
 * Slot n lies in list ⌊n / LIST_SIZE⌋, at the index a keyed permutation (a four-round Feistel
 * network over 16 bits, SHA-256 under a per-org key as its round function) makes of n mod
 * LIST_SIZE: unique in its list, and unpredictable to whoever lacks the key (HAIP), while
 * allocation stays a counter that survives restarts with the ledger object's storage.
 */
import { logIdFor } from "#audit/checkpoint";
import { sha256 } from "#audit/digest";
import { utf8 } from "#audit/encoding";
import { type Env, misconfigured, publicBaseUrl } from "../env";
import { placeOf, type Slot } from "./permutation";

export { LIST_BITS, LIST_SIZE, type Slot } from "./permutation";

/** The per-org permutation key, from the master key (never rotated with the signing keys). */
export function indexKey(env: Env, orgId: string): Uint8Array {
  const secret = env.PRINCIPAL_MASTER_KEY;
  if (!secret) throw misconfigured("PRINCIPAL_MASTER_KEY");
  return sha256(utf8(`status-list-index\u0000${secret}\u0000${orgId}`));
}

/**
 * A list's public id: the org's public transparency log id (never its internal id, as in the
 * Risk Payload's `log_id`) and the list's number.
 */
export function statusListId(orgId: string, list: number): string {
  return `${logIdFor(orgId)}.${list}`;
}

const LIST_ID = /^([0-9a-f]{32})\.(0|[1-9]\d{0,8})$/;

export function parseStatusListId(id: string): { logId: string; list: number } | null {
  const match = LIST_ID.exec(id);
  return match ? { logId: match[1] as string, list: Number(match[2]) } : null;
}

export function statusListUri(env: Env, id: string): string {
  return `${publicBaseUrl(env)}/v1/status-lists/${id}`;
}

/** The `status` claim (§6.2) of the thing at `slot`. */
export function statusClaim(env: Env, orgId: string, slot: Slot) {
  return { status_list: placeReference(env, orgId, placeOf(indexKey(env, orgId), slot)) };
}

/** The place of a thing created through a ledger commit: slot `2s`, s its entry's sequence. */
export function entryPlace(
  env: Env,
  orgId: string,
  sequence: number,
): { list: number; idx: number } {
  return placeOf(indexKey(env, orgId), { kind: "entry", sequence });
}

/** The `status_list` reference (§6.2) of a place in `orgId`'s lists. */
export function placeReference(env: Env, orgId: string, place: { list: number; idx: number }) {
  return { idx: place.idx, uri: statusListUri(env, statusListId(orgId, place.list)) };
}
