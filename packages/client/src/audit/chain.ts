import { canonicalize } from "./canonical.js";
import { sha256 } from "./digest.js";
import { hashBytes, toHex, utf8 } from "./encoding.js";

/** The prev_hash of sequence 1: 32 zero bytes. */
export const GENESIS_HASH = "0".repeat(64);

const LEAF_PREFIX = new Uint8Array([0x00]);

export interface Party {
  type: string;
  id: string;
}

/** What is hashed: RFC 8785 canonical JSON of exactly these fields. */
export interface LedgerEntry {
  v: 1;
  org_id: string;
  sequence: number;
  /** Entry id. */
  id: string;
  /** E.g. "org.created". */
  type: string;
  actor: Party;
  subject: Party | null;
  /** `sha256:<hex>` of the canonical payload; the payload itself is never in the ledger. */
  digest: string;
  /** ISO 8601 UTC with milliseconds. */
  time: string;
}

/** The fields an entry's row carries, from which the hashed LedgerEntry is rebuilt. */
export type EntryFields = Pick<
  LedgerEntry,
  "sequence" | "id" | "type" | "actor" | "subject" | "digest" | "time"
>;

/** The LedgerEntry of an org's row: the org id is implied by the ledger, not stored per row. */
export function toLedgerEntry(orgId: string, row: EntryFields): LedgerEntry {
  const { sequence, id, type, actor, subject, digest, time } = row;
  return { v: 1, org_id: orgId, sequence, id, type, actor, subject, digest, time };
}

/**
 * hex(SHA-256(bytes(prevHash) || utf8(JCS(entry)))).
 *
 * Exactly the LedgerEntry fields are hashed, and of a party exactly `type` and `id`: a caller
 * handing in a wider object (a stored row, an actor with a display name) must not get a hash
 * that covers data the row does not keep, or the entry could never be verified again.
 */
export function entryHash(prevHashHex: string, entry: LedgerEntry): string {
  const hashed: LedgerEntry = {
    v: entry.v,
    org_id: entry.org_id,
    sequence: entry.sequence,
    id: entry.id,
    type: entry.type,
    actor: party(entry.actor),
    subject: entry.subject === null ? null : party(entry.subject),
    digest: entry.digest,
    time: entry.time,
  };
  return toHex(sha256(hashBytes(prevHashHex, "prev_hash"), utf8(canonicalize(hashed))));
}

/**
 * RFC 6962 leaf hash hex(SHA-256(0x00 || bytes(entryHash))): the Merkle leaf data is the
 * 32-byte entry hash, so a Merkle proof about a leaf is a proof about one chained entry.
 */
export function leafHash(entryHashHex: string): string {
  return toHex(sha256(LEAF_PREFIX, hashBytes(entryHashHex, "entry hash")));
}

function party(p: Party): Party {
  return { type: p.type, id: p.id };
}
