/**
 * The keys a chain is verified with, and the one way a hop's signature is checked.
 *
 * Only two kinds of key verify anything: EC P-256 (ES256) and OKP Ed25519 (EdDSA). The
 * algorithm is pinned to the key: a JWS is checked only under the algorithm its key's type
 * implies (and the JWK's own `alg`, when it has one, must agree), never under the header's
 * choice alone. JWS work is jose's (WebCrypto underneath, so it runs in workerd and Node alike).
 */
import { type CryptoKey, compactVerify, importJWK, type JWK } from "jose";
import { sha256 } from "#audit/digest";
import { base64UrlToBytes, base64url, hexToBytes, toHex, utf8 } from "#audit/encoding";
import { type Claims, isClaims, own, text } from "./claims";
import { textDigest } from "./disclosures";

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

/**
 * RFC 7638 thumbprint (SHA-256, base64url) of a pinned key: the required members in
 * lexicographic order, no whitespace. Computed synchronously here rather than with jose's
 * `calculateJwkThumbprint`, whose WebCrypto digest costs more than the rest of a hop; the
 * tests check both agree.
 */
export function thumbprint(key: PinnedKey): string {
  const { crv, kty, x, y } = key.jwk;
  const members = y === undefined ? { crv, kty, x } : { crv, kty, x, y };
  return base64url(sha256(utf8(JSON.stringify(members))));
}

// Imported keys per isolate, by algorithm and key material: issuers and agents sign many
// times with one key, and importing costs as much as verifying. Bounded, oldest out first.
const MAX_CACHED_KEYS = 1000;
const imported = new Map<string, Promise<CryptoKey>>();

function cryptoKeyOf(key: PinnedKey): Promise<CryptoKey> {
  const id = `${key.alg}.${key.jwk.x}.${key.jwk.y ?? ""}`;
  let pending = imported.get(id);
  if (!pending) {
    pending = importJWK(key.jwk, key.alg) as Promise<CryptoKey>;
    imported.set(id, pending);
    pending.catch(() => imported.delete(id));
    const oldest = imported.keys().next().value;
    if (imported.size > MAX_CACHED_KEYS && oldest !== undefined) imported.delete(oldest);
  }
  return pending;
}

// Signatures of delegating hops already verified, per isolate: an open mandate's root and a
// platform's hop come back with every payment made under them, and a signature over the same
// bytes under the same key verifies the same way each time. Kept by key and the JWS's SHA-256
// (a credential may be 64 KiB; a digest is 43 characters), successes only, at most 1000, oldest
// out first. A last hop is never kept: it is signed for one payment and never seen again.
const MAX_VERIFIED = 1000;
const verified = new Set<string>();

/**
 * Whether `jws` verifies under `key`: false for a header `alg` other than the key's, a key
 * WebCrypto refuses (a P-256 point off the curve), or a signature that does not verify.
 * `remember`: keep a success, so the same JWS under the same key is not verified again.
 */
export async function verifiesUnder(
  jws: string,
  header: Claims,
  key: PinnedKey,
  { remember = false }: { remember?: boolean } = {},
): Promise<boolean> {
  if (own(header, "alg") !== key.alg) return false;
  const id = remember ? `${key.alg}.${key.jwk.x}.${key.jwk.y ?? ""}.${textDigest(jws)}` : null;
  if (id !== null && verified.has(id)) return true;
  try {
    await compactVerify(jws, await cryptoKeyOf(key), { algorithms: [key.alg] });
  } catch {
    return false;
  }
  if (id !== null) {
    verified.add(id);
    const oldest = verified.values().next().value;
    if (verified.size > MAX_VERIFIED && oldest !== undefined) verified.delete(oldest);
  }
  return true;
}

/** P-256's group order n: ECDSA accepts (r, s) and (r, n − s) alike (WebCrypto included). */
const P256_ORDER = 0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551n;

/**
 * Every text of a verified compact JWS that verifies the same way under the same key: itself,
 * and for ES256 its twin signature (r, n − s). (Canonical base64url leaves EdDSA one text.) What
 * the service remembers is keyed by content, never by these; they find what was remembered by
 * text before it was (docs/credentials.md, "Spends recorded before consents were keyed by content").
 */
export function signatureSpellings(jws: string, alg: unknown): string[] {
  if (alg !== "ES256") return [jws];
  const dot = jws.lastIndexOf(".");
  const signature = base64UrlToBytes(jws.slice(dot + 1));
  const s = BigInt(`0x${toHex(signature.subarray(32))}`);
  const twin = new Uint8Array(64);
  twin.set(signature.subarray(0, 32));
  twin.set(hexToBytes((P256_ORDER - s).toString(16).padStart(64, "0")), 32);
  return [jws, `${jws.slice(0, dot)}.${base64url(twin)}`];
}

/**
 * Forgets every signature kept: for the benchmarks that time verification itself
 * (`bench:credential`, bench:assess's credential compute), which present one chain again and
 * again and must pay for its three verifications each time.
 */
export function forgetVerifiedSignatures(): void {
  verified.clear();
}
