/**
 * An issuer's keys: which JWKs may be trusted (inline or fetched), and fetching a JWKS URL
 * through the outbound guard with revalidation. The cache policy that decides when to fetch is
 * in issuers.ts; docs/credentials.md ("Trust anchors") states both.
 */
import { importJWK } from "jose";
import type { IssuerJwk } from "../db/schema";
import type { Env } from "../env";
import { fetchJsonRevalidated, OutboundError, outboundPolicy } from "../net/outbound";
import { isClaims, own } from "./claims";
import { ISSUER_KID, MAX_ISSUER_KEYS } from "./issuer-schemas";
import { isPinned, pinKey } from "./keys";

/** Cached keys are fresh this long; after it they are used while a refresh runs. */
export const JWKS_TTL_MS = 5 * 60_000;
/** At most one fetch of an issuer's URL per this interval, whatever asks (an unknown kid). */
export const REFETCH_INTERVAL_MS = 60_000;
/** Cached keys older than this are not used, even when the URL cannot be reached. */
export const MAX_STALE_MS = 24 * 60 * 60_000;
export const JWKS_MAX_BYTES = 64 * 1024;
export const JWKS_TIMEOUT_MS = 3000;
const MAX_ETAG = 256;

/**
 * A JWK as an issuer key is stored, or why it cannot be one: a public EC P-256 or Ed25519 key
 * (the verifier's own rule, `pinKey`) that WebCrypto imports (a P-256 point on the curve), with
 * the RFC 7638 members and the `kid`, when it has a usable one, and nothing else.
 */
export async function issuerKey(jwk: unknown): Promise<IssuerJwk | { problem: string }> {
  const pinned = pinKey(jwk);
  if (!isPinned(pinned)) return { problem: pinned.problem };
  const kid = own(jwk as Record<string, unknown>, "kid");
  if (kid !== undefined && !(typeof kid === "string" && ISSUER_KID.test(kid))) {
    return { problem: "has a kid that is not 1 to 200 printable ASCII characters" };
  }
  try {
    await importJWK(pinned.jwk, pinned.alg);
  } catch {
    return { problem: "is not a valid public key (WebCrypto refuses it)" };
  }
  const { kty, crv, x, y } = pinned.jwk as IssuerJwk;
  return { kty, crv, x, ...(y === undefined ? {} : { y }), ...(kid === undefined ? {} : { kid }) };
}

export function isIssuerKey(key: IssuerJwk | { problem: string }): key is IssuerJwk {
  return !("problem" in key);
}

/**
 * The usable keys of a fetched JWK Set: a JWKS may publish other keys (RSA, encryption keys),
 * which are skipped, never trusted; a set without any usable key, or with too many, is refused.
 */
async function usableKeys(document: unknown): Promise<IssuerJwk[] | { problem: string }> {
  const keys = isClaims(document) ? own(document, "keys") : undefined;
  if (!Array.isArray(keys)) return { problem: "the answer is not a JWK Set ({keys: [...]})" };
  const signing = keys.filter(
    (k) => !isClaims(k) || [undefined, "sig"].includes(own(k, "use") as string),
  );
  const usable = (await Promise.all(signing.map(issuerKey))).filter(isIssuerKey);
  if (usable.length === 0) return { problem: "the JWK Set has no public ES256 or EdDSA key" };
  if (usable.length > MAX_ISSUER_KEYS)
    return { problem: `the JWK Set has over ${MAX_ISSUER_KEYS} usable keys` };
  return usable;
}

export type JwksFetch =
  | { outcome: "fetched"; keys: IssuerJwk[]; etag: string | null }
  | { outcome: "not_modified" }
  | { outcome: "failed"; problem: string };

/**
 * Fetches an issuer's JWKS URL through the outbound guard (no redirects, 64 KiB, 3 s), with
 * `If-None-Match` when a cached copy has an ETag. Never throws for what the URL answers.
 */
export async function fetchIssuerJwks(
  env: Env,
  url: string,
  etag: string | null,
): Promise<JwksFetch> {
  try {
    const answer = await fetchJsonRevalidated(url, outboundPolicy(env), {
      etag,
      maxBytes: JWKS_MAX_BYTES,
      timeoutMs: JWKS_TIMEOUT_MS,
    });
    if (answer.status === 304) return { outcome: "not_modified" };
    const keys = await usableKeys(answer.json);
    if (!Array.isArray(keys)) return { outcome: "failed", problem: keys.problem };
    const tag = answer.etag !== null && answer.etag.length <= MAX_ETAG ? answer.etag : null;
    return { outcome: "fetched", keys, etag: tag };
  } catch (error) {
    if (error instanceof OutboundError) return { outcome: "failed", problem: error.message };
    throw error;
  }
}
