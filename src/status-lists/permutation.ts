/**
 * The keyed permutation behind the service's status-list indices (docs/status-lists.md,
 * "Issued"; src/status-lists/indices.ts says where slots come from). Pure compute.
 */
import { sha256 } from "#audit/digest";
import { utf8 } from "#audit/encoding";
import type { StatusBits } from "./encoding";

export const LIST_SIZE = 1 << 16;
const HALF_BITS = 8;
const HALF_MASK = (1 << HALF_BITS) - 1;
export const LIST_BITS: StatusBits = 2;

export type Slot = { kind: "verdict"; counter: number } | { kind: "entry"; sequence: number };

export function slotOf(slot: Slot): number {
  return slot.kind === "verdict" ? 2 * slot.counter + 1 : 2 * slot.sequence;
}

function round(key: Uint8Array, list: number, r: number, half: number): number {
  const digest = sha256(key, utf8(`${list}.${r}.${half}`));
  return (digest[0] as number) & HALF_MASK;
}

/** The Feistel permutation of `n` (0 ≤ n < LIST_SIZE) for list `list`. */
export function permute(key: Uint8Array, list: number, n: number): number {
  let left = n >> HALF_BITS;
  let right = n & HALF_MASK;
  for (let r = 0; r < 4; r++) {
    const next = left ^ round(key, list, r, right);
    left = right;
    right = next;
  }
  return (left << HALF_BITS) | right;
}

/** The list and index of a slot. */
export function placeOf(key: Uint8Array, slot: Slot): { list: number; idx: number } {
  const n = slotOf(slot);
  const list = Math.floor(n / LIST_SIZE);
  return { list, idx: permute(key, list, n % LIST_SIZE) };
}
