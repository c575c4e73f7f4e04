/**
 * The network key and the keyed digests that are all that ever crosses orgs (docs/network.md,
 * "What is shared"). NETWORK_KEYS is a secret like the signing key: a JSON array of 256-bit
 * `oct` JWKs with a `kid` (`npm run -s keygen network`). The first key is the one read with:
 * the assess path and training look digests up under it. Every key listed is written with, so a
 * rotation overlaps: add the new key second (both are written), after 30 days (the window the
 * assess path reads) move it first, later drop the old one; its rows age out with retention.
 *
 * A digest is HMAC-SHA-256 over `kind:value`, base64url: the raw value never leaves the org,
 * and without the key nobody (an org reading its own answers included) can test a guess.
 */
import { createHmac } from "node:crypto";
import { fromBase64url } from "#audit/encoding";

/** What a digest identifies. */
export const NETWORK_KINDS = ["payee", "agent_key", "issuer", "instrument"] as const;
export type NetworkKind = (typeof NETWORK_KINDS)[number];

export interface NetworkKey {
  kid: string;
  secret: Uint8Array;
}

/** k-anonymity floor: no count is released from fewer other orgs than this, whatever is set. */
export const MIN_K = 3;

const parsed = new Map<string, NetworkKey[] | null>();

/**
 * The network keys, read key first; null when NETWORK_KEYS is missing or unusable (the
 * network is then off for everyone: no digest can be made or looked up). Takes the one member
 * it reads, not the Worker's `Env`: Node tests and benchmarks call it too.
 */
export function networkKeys(env: { NETWORK_KEYS?: string }): NetworkKey[] | null {
  const raw = env.NETWORK_KEYS;
  if (!raw) return null;
  const cached = parsed.get(raw);
  if (cached !== undefined) return cached;
  const keys = parseKeys(raw);
  parsed.set(raw, keys);
  return keys;
}

function parseKeys(raw: string): NetworkKey[] | null {
  try {
    const list = JSON.parse(raw) as unknown;
    if (!Array.isArray(list) || list.length === 0) return null;
    const keys = list.map((jwk: { kty?: unknown; k?: unknown; kid?: unknown }) => {
      if (jwk?.kty !== "oct" || typeof jwk.k !== "string" || typeof jwk.kid !== "string") {
        throw new Error("not an oct JWK with a kid");
      }
      const secret = fromBase64url(jwk.k);
      if (secret.length !== 32) throw new Error("k is not 256 bits");
      return { kid: jwk.kid, secret };
    });
    return new Set(keys.map((k) => k.kid)).size === keys.length ? keys : null;
  } catch {
    return null;
  }
}

/** The keyed digest of one identifier under one key. */
export function networkDigest(key: NetworkKey, kind: NetworkKind, value: string): string {
  return createHmac("sha256", key.secret).update(`${kind}:${value}`).digest("base64url");
}

/** The k the service releases counts at: NETWORK_K when set and at least MIN_K, else MIN_K. */
export function networkK(env: { NETWORK_K?: string }): number {
  const k = Number(env.NETWORK_K);
  return Number.isInteger(k) && k >= MIN_K ? k : MIN_K;
}
