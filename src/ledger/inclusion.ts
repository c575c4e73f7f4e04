import type { CheckpointRecord } from "#audit/checkpoint";
import { inclusionProof } from "#audit/merkle";
import type { LedgerStore } from "./ledger-store";

export interface InclusionAnswer {
  sequence: number;
  leaf_index: number;
  leaf_hash: string;
  tree_size: number;
  audit_path: string[];
  checkpoint: CheckpointRecord;
}

/** An inclusion proof for one entry against the newest checkpoint, or null while pending. */
export function inclusionOf(store: LedgerStore, sequence: number): InclusionAnswer | null {
  const checkpoint = store.latestCheckpoint();
  const entry = store.entry(sequence);
  if (!checkpoint || !entry || sequence > checkpoint.tree_size) return null;
  return {
    sequence,
    leaf_index: sequence - 1,
    leaf_hash: entry.leaf_hash,
    tree_size: checkpoint.tree_size,
    audit_path: inclusionProof(store.nodes, sequence - 1, checkpoint.tree_size),
    checkpoint,
  };
}
