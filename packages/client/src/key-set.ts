import { createLocalJWKSet, createRemoteJWKSet, type JSONWebKeySet } from "jose";

/** Where the service's public keys come from: the set itself, or its URL. */
export type KeySource =
  | { jwks: JSONWebKeySet; jwksUrl?: never }
  | { jwksUrl: string | URL; jwks?: never };

type KeyGetter = ReturnType<typeof createLocalJWKSet>;

// One remote set per URL for the life of the isolate or process: jose caches the keys, refetches
// on an unknown `kid` (a rotation) at most every 30 s, and considers them stale after 10 min.
const remoteSets = new Map<string, KeyGetter>();

/** A jose key getter for the source; remote sets are fetched once and cached. */
export function keyGetter(source: KeySource): KeyGetter {
  if (source.jwks) return createLocalJWKSet(source.jwks);
  if (!source.jwksUrl) throw new TypeError("pass `jwks` (a key set) or `jwksUrl`");
  const url = new URL(source.jwksUrl);
  let getter = remoteSets.get(url.href);
  if (!getter) {
    getter = createRemoteJWKSet(url) as unknown as KeyGetter;
    remoteSets.set(url.href, getter);
  }
  return getter;
}
