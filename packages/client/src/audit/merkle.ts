import { sha256 } from "./digest.js";
import { hashBytes, toHex } from "./encoding.js";

/**
 * RFC 6962 / RFC 9162 Merkle tree over leaf hashes (see chain.ts leafHash; this module never
 * sees leaf data). Hashes are lowercase hex strings throughout.
 *
 * In the RFC's recursion MTH(D[n]) = HASH(0x01 || MTH(D[0:k]) || MTH(D[k:n])), k the largest
 * power of two below n, every left part is a perfect subtree aligned to its size, and every
 * range met is [start, start + size) with start a multiple of the power of two >= size. Such a
 * range is the concatenation of the perfect subtrees given by the binary digits of its size,
 * so roots and proofs need only the stored perfect subtree hashes: O(log n) lookups, no leaves.
 */

/** MTH of zero leaves: SHA-256 of the empty string. */
export const EMPTY_ROOT = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

const NODE_PREFIX = new Uint8Array([0x01]);

/** Interior node: hex(SHA-256(0x01 || left || right)). */
export function nodeHash(leftHex: string, rightHex: string): string {
  return toHex(sha256(NODE_PREFIX, hashBytes(leftHex, "left"), hashBytes(rightHex, "right")));
}

/**
 * Storage of complete (perfect, aligned) subtree hashes: level 0 = leaf hashes, index =
 * position at that level, so node (level, index) covers leaves [index * 2^level, (index+1) * 2^level).
 */
export interface NodeStore {
  get(level: number, index: number): string | undefined;
  set(level: number, index: number, hash: string): void;
}

export function memoryNodeStore(): NodeStore {
  const nodes = new Map<string, string>();
  return {
    get: (level, index) => nodes.get(`${level}:${index}`),
    set: (level, index, hash) => {
      nodes.set(`${level}:${index}`, hash);
    },
  };
}

/** Stores leaf `index` (0-based, must be the next one) and every perfect subtree it completes. */
export function appendLeaf(store: NodeStore, index: number, leafHashHex: string): void {
  requireCount(index, "index");
  hashBytes(leafHashHex, "leaf hash");
  // Refusing anything but the next leaf keeps a bug from silently rewriting history.
  if (store.get(0, index) !== undefined) throw new Error(`merkle: leaf ${index} already stored`);
  if (index > 0 && store.get(0, index - 1) === undefined) {
    throw new Error(`merkle: leaf ${index - 1} missing; leaves are appended in order`);
  }
  let hash = leafHashHex.toLowerCase();
  store.set(0, index, hash);
  // Each time the new node is a right child, its parent's subtree has just become complete.
  for (let level = 0, position = index; position % 2 === 1; level++) {
    hash = nodeHash(need(store, level, position - 1), hash);
    position = (position - 1) / 2;
    store.set(level + 1, position, hash);
  }
}

/** MTH(D[0:size]). */
export function rootAt(store: NodeStore, size: number): string {
  requireCount(size, "size");
  return rangeHash(store, 0, size);
}

/** RFC 6962 §2.1.1 PATH(index, D[size]), bottom-up, as RFC 9162 §2.1.3 verifiers expect it. */
export function inclusionProof(store: NodeStore, index: number, size: number): string[] {
  requireCount(index, "index");
  requireCount(size, "size");
  if (index >= size) throw new RangeError(`merkle: index ${index} not below size ${size}`);
  const topDown: string[] = [];
  let start = 0;
  let n = size;
  let m = index;
  while (n > 1) {
    const k = splitPoint(n);
    if (m < k) {
      topDown.push(rangeHash(store, start + k, n - k));
      n = k;
    } else {
      topDown.push(rangeHash(store, start, k));
      start += k;
      m -= k;
      n -= k;
    }
  }
  return topDown.reverse();
}

/** RFC 6962 §2.1.2 PROOF(oldSize, D[newSize]); empty when oldSize is 0 or equals newSize. */
export function consistencyProof(store: NodeStore, oldSize: number, newSize: number): string[] {
  requireCount(oldSize, "oldSize");
  requireCount(newSize, "newSize");
  if (oldSize > newSize) throw new RangeError(`merkle: oldSize ${oldSize} > newSize ${newSize}`);
  if (oldSize === 0 || oldSize === newSize) return [];
  // SUBPROOF(m, D[start:start+n], whole), unrolled.
  const topDown: string[] = [];
  let start = 0;
  let n = newSize;
  let m = oldSize;
  let whole = true;
  while (m !== n) {
    const k = splitPoint(n);
    if (m <= k) {
      topDown.push(rangeHash(store, start + k, n - k));
      n = k;
    } else {
      topDown.push(rangeHash(store, start, k));
      start += k;
      m -= k;
      n -= k;
      whole = false;
    }
  }
  // SUBPROOF(m, D[m], false) = {MTH(D[m])}: the old tree is a proper subtree, name it.
  if (!whole) topDown.push(rangeHash(store, start, m));
  return topDown.reverse();
}

/** RFC 9162 §2.1.3.2. Never throws: malformed input is simply not a valid proof. */
export function verifyInclusion(
  leafHashHex: string,
  index: number,
  size: number,
  proof: string[],
  rootHex: string,
): boolean {
  if (!isCount(index) || !isCount(size) || index >= size) return false;
  if (!isHash(leafHashHex) || !isHash(rootHex) || !isProof(proof)) return false;
  let fn = index;
  let sn = size - 1;
  let r = leafHashHex.toLowerCase();
  for (const p of proof) {
    if (sn === 0) return false;
    if (fn % 2 === 1 || fn === sn) {
      r = nodeHash(p, r);
      while (fn % 2 === 0 && fn !== 0) [fn, sn] = [fn / 2, Math.floor(sn / 2)];
    } else {
      r = nodeHash(r, p);
    }
    [fn, sn] = [Math.floor(fn / 2), Math.floor(sn / 2)];
  }
  return sn === 0 && r === rootHex.toLowerCase();
}

/**
 * RFC 9162 §2.1.4.2, plus the two cases it leaves to the caller: equal sizes (empty proof,
 * equal roots) and an empty old tree (empty proof, old root EMPTY_ROOT; any tree extends it).
 */
export function verifyConsistency(
  oldSize: number,
  newSize: number,
  oldRootHex: string,
  newRootHex: string,
  proof: string[],
): boolean {
  if (!isCount(oldSize) || !isCount(newSize) || oldSize > newSize) return false;
  if (!isHash(oldRootHex) || !isHash(newRootHex) || !isProof(proof)) return false;
  const first = oldRootHex.toLowerCase();
  const second = newRootHex.toLowerCase();
  if (oldSize === newSize) return proof.length === 0 && first === second;
  if (oldSize === 0) return proof.length === 0 && first === EMPTY_ROOT;
  if (proof.length === 0) return false;
  const path = isPowerOfTwo(oldSize) ? [first, ...proof] : proof;
  let fn = oldSize - 1;
  let sn = newSize - 1;
  while (fn % 2 === 1) [fn, sn] = [(fn - 1) / 2, Math.floor(sn / 2)];
  let fr = (path[0] as string).toLowerCase();
  let sr = fr;
  for (const c of path.slice(1)) {
    if (sn === 0) return false;
    if (fn % 2 === 1 || fn === sn) {
      fr = nodeHash(c, fr);
      sr = nodeHash(c, sr);
      while (fn % 2 === 0 && fn !== 0) [fn, sn] = [fn / 2, Math.floor(sn / 2)];
    } else {
      sr = nodeHash(sr, c);
    }
    [fn, sn] = [Math.floor(fn / 2), Math.floor(sn / 2)];
  }
  return sn === 0 && fr === first && sr === second;
}

/**
 * Streaming MTH in O(log n) memory: the perfect subtrees of the leaves so far, one per binary
 * digit of the size, leftmost (largest) first. Used by verifiers that read leaves in order.
 */
export class Frontier {
  private readonly subtrees: { level: number; hash: string }[] = [];
  private count = 0;

  push(leafHashHex: string): void {
    hashBytes(leafHashHex, "leaf hash");
    let node = { level: 0, hash: leafHashHex.toLowerCase() };
    for (let top = this.subtrees.at(-1); top?.level === node.level; top = this.subtrees.at(-1)) {
      this.subtrees.pop();
      node = { level: node.level + 1, hash: nodeHash(top.hash, node.hash) };
    }
    this.subtrees.push(node);
    this.count++;
  }

  get size(): number {
    return this.count;
  }

  root(): string {
    return foldRight(this.subtrees.map((s) => s.hash));
  }
}

/** MTH of leaves [start, start + size), start aligned as in every RFC 6962 range (see top). */
function rangeHash(store: NodeStore, start: number, size: number): string {
  const parts: string[] = [];
  let offset = start;
  let remaining = size;
  for (let level = Math.floor(Math.log2(Math.max(size, 1))); level >= 0; level--) {
    const width = 2 ** level;
    if (remaining < width) continue;
    if (offset % width !== 0) throw new Error(`merkle: range at ${start} is not aligned`);
    parts.push(need(store, level, offset / width));
    offset += width;
    remaining -= width;
  }
  return foldRight(parts);
}

/** Root over perfect subtrees listed left to right: each joins everything to its right. */
function foldRight(subtrees: string[]): string {
  let root = subtrees.at(-1);
  if (root === undefined) return EMPTY_ROOT;
  for (let i = subtrees.length - 2; i >= 0; i--) root = nodeHash(subtrees[i] as string, root);
  return root;
}

function need(store: NodeStore, level: number, index: number): string {
  const hash = store.get(level, index);
  if (hash === undefined) throw new Error(`merkle: node (${level}, ${index}) missing`);
  return hash;
}

/** The largest power of two strictly below n (n >= 2): RFC 6962's split. */
function splitPoint(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

function isPowerOfTwo(n: number): boolean {
  return n > 0 && 2 ** Math.round(Math.log2(n)) === n;
}

function isCount(n: unknown): n is number {
  return Number.isSafeInteger(n) && (n as number) >= 0;
}

function requireCount(n: number, name: string): void {
  if (!isCount(n)) throw new RangeError(`merkle: ${name} must be a non-negative safe integer`);
}

function isHash(h: unknown): h is string {
  return typeof h === "string" && /^[0-9a-fA-F]{64}$/.test(h);
}

function isProof(proof: unknown): proof is string[] {
  return Array.isArray(proof) && proof.every(isHash);
}
