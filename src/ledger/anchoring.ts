import { type CheckpointRecord, checkpointNote, logIdFor } from "#audit/checkpoint";
import { consistencyProof, rootAt, verifyConsistency } from "#audit/merkle";
import type { Env } from "../env";
import { signer } from "../signing/signer";
import type { LedgerStore } from "./ledger-store";

/** How long appends wait for a checkpoint to cover them: the window of `pending`. */
export const ANCHOR_DELAY_MS = 10_000;

export function anchorDelay(env: Env): number {
  const configured = Number(env.LEDGER_ANCHOR_DELAY_MS);
  return Number.isInteger(configured) && configured > 0 ? configured : ANCHOR_DELAY_MS;
}

/**
 * The ledger object's anchoring alarm. Whether it is set is remembered in memory (cleared when
 * it fires), so an append asks storage for the alarm only the first time after each firing.
 */
export class AnchorAlarm {
  private set = false;

  constructor(
    private readonly storage: DurableObjectStorage,
    private readonly env: () => Env,
  ) {}

  /** Fires as soon as possible: a backlog found at activation is written out and anchored. */
  now(): void {
    this.set = true;
    void this.storage.setAlarm(Date.now());
  }

  /** Makes sure an alarm will anchor what was just appended, at most the anchor delay later. */
  async schedule(): Promise<void> {
    if (this.set) return;
    this.set = true;
    if ((await this.storage.getAlarm()) === null) {
      await this.storage.setAlarm(Date.now() + anchorDelay(this.env()));
    }
  }

  /** The alarm is running: the next append arms it again. */
  fired(): void {
    this.set = false;
  }
}

/**
 * Builds, proves consistent with `previous` (the newest checkpoint, if any), signs and stores a
 * checkpoint over the first `size` entries, which must be more than `previous` covers.
 */
export async function signCheckpoint(
  env: Env,
  store: LedgerStore,
  orgId: string,
  size: number,
  previous: CheckpointRecord | undefined,
): Promise<CheckpointRecord> {
  const root = rootAt(store.nodes, size);
  const previousSize = previous?.tree_size ?? 0;
  const proof = previous ? consistencyProof(store.nodes, previousSize, size) : [];
  // Never sign a head that does not extend the last one: that would fork the log.
  if (previous && !verifyConsistency(previousSize, size, previous.root_hash, root, proof)) {
    throw new Error(
      `ledger ${orgId}: tree of size ${size} is not consistent with the last checkpoint`,
    );
  }
  const logId = logIdFor(orgId);
  const time = new Date().toISOString();
  const note = checkpointNote({ logId, treeSize: size, rootHash: root, time });
  const jws = await (await signer(env)).signBytes(
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
  store.insertCheckpoint(record);
  return record;
}
