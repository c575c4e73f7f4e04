/**
 * The keys a chain is verified with, and the one way a hop's signature is checked.
 *
 * Only two kinds of key verify anything: EC P-256 (ES256) and OKP Ed25519 (EdDSA). The
 * algorithm is pinned to the key: a JWS is checked only under the algorithm its key's type
 * implies (and the JWK's own `alg`, when it has one, must agree), never under the header's
 * choice alone. JWS work is jose's (WebCrypto underneath, so it runs in workerd and Node alike).
 */
import { calculateJwkThumbprint, compactVerify, importJWK, type JWK } from "jose";
import { base64UrlToBytes } from "../lib/encoding";
import { type Claims, isClaims, own, text } from "./claims";

export type SignatureAlg = "ES256" | "EdDSA";
export const SIGNATURE_ALGS: readonly string[] = ["ES256", "EdDSA"];

/** A public key with the algorithm it is pinned to. */
export interface PinnedKey {
  /** The RFC 7638 members only (kty, crv, x[, y]): nothing else travels with the key. */
  jwk: JWK;
  alg: SignatureAlg;
}

// Every JWK member that carries private or secret key material, in any key type.
const PRIVATE_MEMBERS = ["d", "p", "q", "dp", "dq", "qi", "oth", "k", "priv"];

function coordinate(value: unknown): string | undefined {
  const member = text(value);
  if (member === undefined) return undefined;
  try {
    return base64UrlToBytes(member).length === 32 ? member : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The key pinned to its algorithm, or the reason it is not one: private material, a type other
 * than EC P-256 or Ed25519, coordinates that are not 32 bytes of canonical base64url, or an
 * `alg` member that disagrees with the type.
 */
export function pinKey(input: unknown): PinnedKey | { problem: string } {
  if (!isClaims(input)) return { problem: "is not a JWK object" };
  if (PRIVATE_MEMBERS.some((m) => Object.hasOwn(input, m))) {
    return { problem: "carries private key material" };
  }
  const kty = own(input, "kty");
  const crv = own(input, "crv");
  const x = coordinate(own(input, "x"));
  let pinned: PinnedKey;
  if (kty === "EC" && crv === "P-256") {
    const y = coordinate(own(input, "y"));
    if (!x || !y) return { problem: "must have 32-byte base64url x and y" };
    pinned = { jwk: { kty, crv, x, y }, alg: "ES256" };
  } else if (kty === "OKP" && crv === "Ed25519") {
    if (!x) return { problem: "must have a 32-byte base64url x" };
    pinned = { jwk: { kty, crv, x }, alg: "EdDSA" };
  } else {
    return { problem: "must be an EC P-256 or an Ed25519 key" };
  }
  const alg = own(input, "alg");
  if (alg !== undefined && alg !== pinned.alg) return { problem: `says alg ${String(alg)}` };
  return pinned;
}

export function isPinned(key: PinnedKey | { problem: string }): key is PinnedKey {
  return !("problem" in key);
}

/** RFC 7638 thumbprint (SHA-256, base64url) of a pinned key. */
export async function thumbprint(key: PinnedKey): Promise<string> {
  return await calculateJwkThumbprint(key.jwk, "sha256");
}

/**
 * Whether `jws` verifies under `key`: false for a header `alg` other than the key's, a key
 * WebCrypto refuses (a P-256 point off the curve), or a signature that does not verify.
 */
export async function verifiesUnder(jws: string, header: Claims, key: PinnedKey): Promise<boolean> {
  if (own(header, "alg") !== key.alg) return false;
  try {
    const cryptoKey = await importJWK(key.jwk, key.alg);
    await compactVerify(jws, cryptoKey, { algorithms: [key.alg] });
    return true;
  } catch {
    return false;
  }
}
