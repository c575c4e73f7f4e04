/**
 * Looking a credential's references up in lists already fetched (pure compute; the fetching
 * and the cache are check.ts's): draft-ietf-oauth-status-list §6.2 and §8.3.
 */
import type { ParsedChain } from "../ap2-credentials/chain";
import { type Claims, isClaims, own } from "../ap2-credentials/claims";
import { readHop } from "../ap2-credentials/hops";
import { isPinned, pinKey, thumbprint } from "../ap2-credentials/keys";
import { STATUS, statusAt } from "./encoding";
import { type StatusListToken, verifyingKey } from "./token";

const MAX_URI_CHARS = 2048;

/** A hop's reference to its status (§6.2), or why it cannot be one. */
export type StatusReference =
  | { hop: number; idx: number; uri: string }
  | { hop: number; problem: string };

/** The `status.status_list` of every hop that has one, root first. */
export function statusReferences(chain: ParsedChain): StatusReference[] {
  const found: StatusReference[] = [];
  for (const hop of chain.hops) {
    const reading = readHop(hop);
    const claims: Claims = reading instanceof Error ? hop.payload : reading.claims;
    const status = own(claims, "status");
    if (status === undefined) continue;
    const list = isClaims(status) ? own(status, "status_list") : undefined;
    // A `status` naming only other mechanisms is not this one's to judge.
    if (isClaims(status) && list === undefined) continue;
    const idx = isClaims(list) ? own(list, "idx") : undefined;
    const uri = isClaims(list) ? own(list, "uri") : undefined;
    if (typeof idx !== "number" || !Number.isSafeInteger(idx) || idx < 0) {
      found.push({
        hop: hop.index,
        problem: "status.status_list.idx is not a non-negative integer",
      });
    } else if (typeof uri !== "string" || !isUri(uri)) {
      found.push({ hop: hop.index, problem: "status.status_list.uri is not a URI" });
    } else {
      found.push({ hop: hop.index, idx, uri });
    }
  }
  return found;
}

function isUri(text: string): boolean {
  if (text.length > MAX_URI_CHARS) return false;
  try {
    new URL(text);
    return true;
  } catch {
    return false;
  }
}

/** A list as fetched and inflated, before its signature is trusted. */
export interface Fetched {
  token: StatusListToken;
  bytes: Uint8Array;
  /** Epoch ms until which the isolate uses it without fetching again. */
  freshUntil: number;
  /** RFC 7638 thumbprints of the keys already seen to verify it. */
  verifiedBy: Set<string>;
}
export type Loaded = Fetched | { problem: string; freshUntil: number };

export type PrefetchedLists = Map<string, Loaded>;

/** What the credential's status lists say, the worst first (§7.1). */
export type StatusFinding =
  | { state: "valid" }
  | { state: "invalid" | "suspended" | "unknown"; hop: number; detail: string };

const RANK = { valid: 0, unknown: 1, suspended: 2, invalid: 3 } as const;

/**
 * Each reference against its list (§8.3 steps 3–7): the token's `sub` must be its `uri`, its
 * `exp` unpassed, its signature one of `keys`, the index inside the list. INVALID (1) is
 * `invalid`; SUSPENDED (2) and any status the draft leaves to applications are `suspended`
 * (never approved); a list that cannot be had or trusted, or an index past its end, is
 * `unknown`: no statement about the credential can be made.
 */
export async function checkStatus(
  references: StatusReference[],
  lists: PrefetchedLists,
  keys: readonly { kid?: string; jwk: unknown }[],
  now: number,
): Promise<StatusFinding> {
  let worst: StatusFinding = { state: "valid" };
  for (const reference of references) {
    const finding = await checkOne(reference, lists, keys, now);
    if (RANK[finding.state] > RANK[worst.state]) worst = finding;
  }
  return worst;
}

async function checkOne(
  reference: StatusReference,
  lists: PrefetchedLists,
  keys: readonly { kid?: string; jwk: unknown }[],
  now: number,
): Promise<StatusFinding> {
  const hop = reference.hop;
  const unknown = (detail: string): StatusFinding => ({ state: "unknown", hop, detail });
  if ("problem" in reference) return unknown(reference.problem);
  const list = lists.get(reference.uri);
  if (!list) return unknown("the status list was not fetched");
  if ("problem" in list) return unknown(`the status list could not be fetched: ${list.problem}`);
  const { token, bytes } = list;
  if (token.sub !== reference.uri) return unknown("the status list's sub is not its uri");
  if (token.exp !== null && token.exp * 1000 <= now) return unknown("the status list has expired");
  if (!(await trusted(list, keys))) {
    return unknown("the status list is not signed by the credential's issuer");
  }
  const status = statusAt(bytes, token.bits, reference.idx);
  if (status === null) return unknown(`index ${reference.idx} is past the status list's end`);
  if (status === STATUS.valid) return { state: "valid" };
  if (status === STATUS.invalid) {
    return { state: "invalid", hop, detail: `hop ${hop}'s status is INVALID (revoked)` };
  }
  const name = status === STATUS.suspended ? "SUSPENDED" : `0x${status.toString(16)}`;
  return { state: "suspended", hop, detail: `hop ${hop}'s status is ${name}` };
}

async function trusted(
  list: Fetched,
  keys: readonly { kid?: string; jwk: unknown }[],
): Promise<boolean> {
  // The same list comes back with every request for its ttl: a key seen to verify it once is
  // not asked again (the signature is over the very bytes kept).
  for (const candidate of keys) {
    const key = pinKey(candidate.jwk);
    if (isPinned(key) && list.verifiedBy.has(thumbprint(key))) return true;
  }
  const key = await verifyingKey(list.token, keys);
  if (key !== null) list.verifiedBy.add(thumbprint(key));
  return key !== null;
}
