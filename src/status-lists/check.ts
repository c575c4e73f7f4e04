/**
 * Checking the status of an incoming AP2 credential (docs/status-lists.md, "Checked"): each hop
 * whose claims carry `status.status_list {idx, uri}` (draft-ietf-oauth-status-list §6.2) is
 * looked up in its Status List Token.
 *
 *   const lists = prefetchStatusLists(env, references, now);   // beside the context read
 *   ...the context read, the chain verified...
 *   const status = await checkStatus(references, await lists, issuerKeys, now);
 *
 * The fetch starts as soon as the request is parsed, so it runs in parallel with the context
 * read (docs/architecture.md, ADR issue 42 point 4); the signature is checked after it, under
 * the keys of the issuer whose key verified the credential's root. Lists are cached per isolate
 * for their `ttl` (bounded, never past `exp`), and the cache is bounded in bytes.
 */
import type { ParsedChain } from "../ap2-credentials/chain";
import { type Claims, isClaims, own } from "../ap2-credentials/claims";
import { readHop } from "../ap2-credentials/hops";
import { isPinned, pinKey, thumbprint } from "../ap2-credentials/keys";
import type { Env } from "../env";
import { fetchText, OutboundError, outboundPolicy } from "../net/outbound";
import { decompressStatusList, STATUS, StatusListUnreadable, statusAt } from "./encoding";
import {
  readStatusListToken,
  STATUS_LIST_MEDIA_TYPE,
  StatusListRefused,
  type StatusListToken,
  verifyingKey,
} from "./token";

/** A hop's reference to its status (§6.2), or why it cannot be one. */
export type StatusReference =
  | { hop: number; idx: number; uri: string }
  | { hop: number; problem: string };

/** The bounds a Relying Party sets on what a list asks (§11.5, §13.7). */
export const STATUS_LIST_LIMITS = {
  /** Bytes of a Status List Token as fetched. */
  maxTokenBytes: 512 * 1024,
  timeoutMs: 2000,
  /** A `ttl` is honoured between these; a token without one is kept for the default. */
  minTtlSeconds: 5,
  maxTtlSeconds: 3600,
  defaultTtlSeconds: 300,
  /** A list that could not be had is asked again after this. */
  failureSeconds: 15,
  /** Decompressed bytes the isolate keeps across all its cached lists. */
  maxCacheBytes: 16 * 1024 * 1024,
  maxUriChars: 2048,
} as const;

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
  if (text.length > STATUS_LIST_LIMITS.maxUriChars) return false;
  try {
    new URL(text);
    return true;
  } catch {
    return false;
  }
}

/** A list as fetched and inflated, before its signature is trusted. */
interface Fetched {
  token: StatusListToken;
  bytes: Uint8Array;
  /** Epoch ms until which the isolate uses it without fetching again. */
  freshUntil: number;
  /** RFC 7638 thumbprints of the keys already seen to verify it. */
  verifiedBy: Set<string>;
}
type Loaded = Fetched | { problem: string; freshUntil: number };

const cache = new Map<string, Loaded>();
const inFlight = new Map<string, Promise<Loaded>>();
let cachedBytes = 0;

function remember(uri: string, loaded: Loaded): void {
  forget(uri);
  cache.set(uri, loaded);
  cachedBytes += "bytes" in loaded ? loaded.bytes.byteLength : 0;
  for (const [oldest] of cache) {
    if (cachedBytes <= STATUS_LIST_LIMITS.maxCacheBytes) break;
    forget(oldest);
  }
}

function forget(uri: string): void {
  const old = cache.get(uri);
  if (old && "bytes" in old) cachedBytes -= old.bytes.byteLength;
  cache.delete(uri);
}

/** For tests: every cached list is dropped. */
export function forgetStatusLists(): void {
  cache.clear();
  cachedBytes = 0;
}

/** How long a fetched token is used: its `ttl` within the bounds, never past its `exp`. */
function freshUntil(token: StatusListToken, fetchedAt: number): number {
  const { minTtlSeconds, maxTtlSeconds, defaultTtlSeconds } = STATUS_LIST_LIMITS;
  const ttl = Math.min(Math.max(token.ttl ?? defaultTtlSeconds, minTtlSeconds), maxTtlSeconds);
  const until = fetchedAt + ttl * 1000;
  return token.exp === null ? until : Math.min(until, token.exp * 1000);
}

async function load(env: Env, uri: string, now: number): Promise<Loaded> {
  try {
    const jws = await fetchText(uri, outboundPolicy(env), {
      accept: STATUS_LIST_MEDIA_TYPE,
      maxBytes: STATUS_LIST_LIMITS.maxTokenBytes,
      timeoutMs: STATUS_LIST_LIMITS.timeoutMs,
    });
    const token = readStatusListToken(jws);
    const bytes = await decompressStatusList(token.lst);
    return { token, bytes, freshUntil: freshUntil(token, now), verifiedBy: new Set() };
  } catch (error) {
    const known =
      error instanceof OutboundError ||
      error instanceof StatusListRefused ||
      error instanceof StatusListUnreadable;
    const problem = known ? error.message : "the list could not be read";
    return { problem, freshUntil: now + STATUS_LIST_LIMITS.failureSeconds * 1000 };
  }
}

/** One list: the isolate's copy while fresh, else one fetch however many requests ask. */
function listAt(env: Env, uri: string, now: number): Promise<Loaded> {
  const cached = cache.get(uri);
  if (cached && cached.freshUntil > now) return Promise.resolve(cached);
  const running = inFlight.get(uri);
  if (running) return running;
  const pending = load(env, uri, now).then((loaded) => {
    remember(uri, loaded);
    return loaded;
  });
  inFlight.set(uri, pending);
  return pending.finally(() => inFlight.delete(uri));
}

export type PrefetchedLists = Map<string, Loaded>;

/** Every distinct list the references name, fetched in parallel (none: resolves at once). */
export async function prefetchStatusLists(
  env: Env,
  references: StatusReference[],
  now: number,
): Promise<PrefetchedLists> {
  const uris = [...new Set(references.flatMap((r) => ("uri" in r ? [r.uri] : [])))];
  const loaded = await Promise.all(uris.map((uri) => listAt(env, uri, now)));
  return new Map(uris.map((uri, i) => [uri, loaded[i] as Loaded]));
}

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
