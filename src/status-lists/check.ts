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
import type { Env } from "../env";
import { fetchText, OutboundError, outboundPolicy } from "../net/outbound";
import { decompressStatusList, StatusListUnreadable } from "./encoding";
import type { Loaded, PrefetchedLists, StatusReference } from "./lookup";
import {
  readStatusListToken,
  STATUS_LIST_MEDIA_TYPE,
  StatusListRefused,
  type StatusListToken,
} from "./token";

export {
  checkStatus,
  type PrefetchedLists,
  type StatusFinding,
  type StatusReference,
  statusReferences,
} from "./lookup";

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
