import { entryHash, GENESIS_HASH, type LedgerEntry, leafHash, type Party } from "#audit/chain";
import { appendLeaf } from "#audit/merkle";
import { newId } from "../lib/ids";
import type { Head, LedgerStore, StoredEntry } from "./ledger-store";

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

/**
 * Sequences one entry after `head`: its number, time, hash and Merkle leaf, written to the
 * ledger object's storage. Synchronous by design: the caller runs it inside `transactionSync`,
 * and the whole critical section of sequencing has no await in it. Answers the appended entry
 * and the new head (the same head when `once` names an earlier entry).
 */
export function sequenceEntry(
  store: LedgerStore,
  orgId: string,
  input: AppendInput,
  head: Head | null,
): [Appended, Head | null] {
  const earlier = input.once === undefined ? undefined : store.onceEntry(input.once);
  if (earlier) {
    const { id, sequence, hash } = earlier;
    return [{ entry_id: id, sequence, hash, status: "pending" }, head];
  }
  const [stored, next] = writeEntry(store, orgId, input, head);
  if (input.once !== undefined) store.setOnce(input.once, stored.sequence);
  const { id, sequence, hash } = stored;
  return [{ entry_id: id, sequence, hash, status: "pending" }, next];
}

/**
 * Sequences a new entry under every key of `once`, for a caller that has just found none of
 * them used (`earlierCommit`) in the same synchronous step: several keys, one entry. Answers the
 * stored entry itself, so the caller need not read it back.
 */
export function sequenceUnder(
  store: LedgerStore,
  orgId: string,
  input: Omit<AppendInput, "once">,
  once: readonly string[],
  head: Head | null,
): [StoredEntry, Head] {
  if (once.length === 0) throw new Error("an entry sequenced under keys needs one");
  const sequenced = writeEntry(store, orgId, input, head);
  for (const key of once) store.setOnce(key, sequenced[0].sequence);
  return sequenced;
}

/** The entry after `head`, written with its leaf; no key is looked up or recorded. */
function writeEntry(
  store: LedgerStore,
  orgId: string,
  input: Omit<AppendInput, "once">,
  head: Head | null,
): [StoredEntry, Head] {
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
  store.insertEntry(stored);
  appendLeaf(store.nodes, sequence - 1, leaf);
  return [stored, { sequence, hash, time }];
}
