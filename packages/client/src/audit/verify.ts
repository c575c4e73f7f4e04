import { entryHash, GENESIS_HASH, leafHash, type Party, toLedgerEntry } from "./chain.js";
import {
  authenticateCheckpoint,
  type CheckpointRecord,
  type ImportedKey,
  logIdFor,
  type VerificationKey,
} from "./checkpoint.js";
import { sha256 } from "./digest.js";
import { toHex, utf8 } from "./encoding.js";
import { EMPTY_ROOT, Frontier, verifyConsistency } from "./merkle.js";

export type { VerificationKey } from "./checkpoint.js";

/** One stored row, as exported. */
export interface AuditEntryRecord {
  id: string;
  sequence: number;
  type: string;
  actor: Party;
  subject: Party | null;
  digest: string;
  time: string;
  prev_hash: string;
  hash: string;
}

export type BreakReason = "sequence_gap" | "link_mismatch" | "hash_mismatch";
export type CheckpointFailure =
  | "signature_invalid"
  | "unknown_key"
  | "note_mismatch"
  | "root_mismatch"
  | "inconsistent"
  | "beyond_log";

export interface VerifyReport {
  ok: boolean;
  /** Entries examined. */
  checked: number;
  /** Last entry examined (stored values), null when none. */
  head: { sequence: number; hash: string } | null;
  first_break: null | { sequence: number; reason: BreakReason; expected: string; actual: string };
  checkpoints: {
    checked: number;
    /** Last checkpoint that verified before any invalid one. */
    latest: { tree_size: number; root_hash: string; time: string } | null;
    first_invalid: null | {
      tree_size: number;
      reason: CheckpointFailure;
      expected?: string;
      actual?: string;
    };
  };
}

type Failure = { reason: CheckpointFailure; expected?: string; actual?: string };

interface Pending {
  cp: CheckpointRecord;
  /** MTH of the rows at tree_size, once the verifier has seen exactly that many rows. */
  root?: string;
  /** Why the root can never be known: fed after later rows, or more rows than exist. */
  unreachable?: "late" | "beyond";
  /** The order-independent checks (signature, note); undefined until `done` settles. */
  auth?: Failure | null;
  done: Promise<void>;
}

/**
 * Streaming verifier: feed entries in sequence order and each checkpoint no later than right
 * after the entry at its tree_size (the export order; earlier is fine, it waits). Memory is
 * O(log n) for the Merkle frontier plus O(1) per checkpoint still waiting for its rows.
 * The same rows give the same report: nothing depends on time, randomness or the environment.
 */
export class AuditVerifier {
  private readonly logId: string;
  private readonly frontier = new Frontier();
  private readonly imported = new Map<string, Promise<ImportedKey>>();
  private readonly queue: Pending[] = [];
  private running = GENESIS_HASH;
  private expected = 1;
  private checked = 0;
  private head: VerifyReport["head"] = null;
  private firstBreak: VerifyReport["first_break"] = null;
  private checkpointsSeen = 0;
  private latest: CheckpointRecord | null = null;
  private firstInvalid: VerifyReport["checkpoints"]["first_invalid"] = null;

  constructor(
    private readonly orgId: string,
    private readonly keys: VerificationKey[],
  ) {
    this.logId = logIdFor(orgId);
  }

  addEntry(row: AuditEntryRecord): void {
    this.checked++;
    this.head = { sequence: row.sequence, hash: row.hash };
    if (this.firstBreak === null) this.firstBreak = this.check(row);
    // After a break the stored hashes still feed the tree, so checkpoints keep their meaning.
    this.running = row.hash;
    this.frontier.push(leafOf(row.hash));
    for (const p of this.queue)
      if (p.cp.tree_size === this.frontier.size) p.root ??= this.frontier.root();
    this.drain();
  }

  async addCheckpoint(cp: CheckpointRecord): Promise<void> {
    this.checkpointsSeen++;
    // Fix the tree state now, before awaiting: the caller may keep feeding entries meanwhile.
    const pending: Pending = { cp, done: Promise.resolve() };
    if (cp.tree_size === this.frontier.size) pending.root = this.frontier.root();
    // Below the rows already fed (or not a number): its root is past recomputing in one pass.
    else if (!(cp.tree_size > this.frontier.size)) pending.unreachable = "late";
    pending.done = authenticateCheckpoint(cp, this.logId, this.keys, this.imported).then((auth) => {
      pending.auth = auth;
    });
    this.queue.push(pending);
    await pending.done;
    this.drain();
  }

  async finish(): Promise<VerifyReport> {
    await Promise.all(this.queue.map((p) => p.done));
    // Still waiting for rows: it covers more rows than exist, so the newest of them are gone.
    for (const p of this.queue) if (p.root === undefined) p.unreachable ??= "beyond";
    this.drain();
    return {
      ok: this.firstBreak === null && this.firstInvalid === null,
      checked: this.checked,
      head: this.head,
      first_break: this.firstBreak,
      checkpoints: {
        checked: this.checkpointsSeen,
        latest: this.latest && {
          tree_size: this.latest.tree_size,
          root_hash: this.latest.root_hash,
          time: this.latest.time,
        },
        first_invalid: this.firstInvalid,
      },
    };
  }

  private check(row: AuditEntryRecord): VerifyReport["first_break"] {
    // `sequence` is where the chain breaks: the sequence due there, whatever the row says.
    const at = (reason: BreakReason, expected: string, actual: string) => ({
      sequence: this.expected,
      reason,
      expected,
      actual,
    });
    if (row.sequence !== this.expected) {
      return at("sequence_gap", String(this.expected), String(row.sequence));
    }
    if (row.prev_hash !== this.running) return at("link_mismatch", this.running, row.prev_hash);
    let recomputed: string;
    try {
      recomputed = entryHash(row.prev_hash, toLedgerEntry(this.orgId, row));
    } catch (error) {
      recomputed = `unhashable: ${(error as Error).message}`;
    }
    if (recomputed !== row.hash) return at("hash_mismatch", recomputed, row.hash);
    this.expected++;
    return null;
  }

  /** Judges waiting checkpoints in the order they were fed, as far as their inputs are known. */
  private drain(): void {
    for (let p = this.queue[0]; p !== undefined; p = this.queue[0]) {
      if (p.auth === undefined || (p.root === undefined && p.unreachable === undefined)) return;
      this.queue.shift();
      if (this.firstInvalid !== null) continue;
      const failure = p.auth ?? this.judge(p);
      if (failure) this.firstInvalid = { tree_size: p.cp.tree_size, ...failure };
      else this.latest = p.cp;
    }
  }

  private judge({ cp, root, unreachable }: Pending): Failure | null {
    if (unreachable === "beyond") {
      return {
        reason: "beyond_log",
        expected: String(this.frontier.size),
        actual: String(cp.tree_size),
      };
    }
    // Out of export order: the root at its size is no longer computable in one pass.
    if (root === undefined) return { reason: "root_mismatch", actual: cp.root_hash };
    if (root !== cp.root_hash)
      return { reason: "root_mismatch", expected: root, actual: cp.root_hash };
    const previousSize = this.latest?.tree_size ?? 0;
    if (cp.previous_tree_size !== previousSize) {
      return {
        reason: "inconsistent",
        expected: String(previousSize),
        actual: String(cp.previous_tree_size),
      };
    }
    const previousRoot = this.latest?.root_hash ?? EMPTY_ROOT;
    const proof = cp.consistency_proof;
    return verifyConsistency(previousSize, cp.tree_size, previousRoot, cp.root_hash, proof)
      ? null
      : { reason: "inconsistent" };
  }
}

/** The Merkle leaf of a stored hash; a malformed one still gets a (never matching) leaf. */
function leafOf(stored: string): string {
  if (/^[0-9a-fA-F]{64}$/.test(stored)) return leafHash(stored);
  return toHex(sha256(new Uint8Array([0]), utf8(String(stored))));
}
