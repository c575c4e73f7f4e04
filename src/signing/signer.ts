import {
  CompactSign,
  calculateJwkThumbprint,
  compactVerify,
  importJWK,
  type JWK,
  type JWTPayload,
  SignJWT,
} from "jose";
import type { Env } from "../env";
import { ApiError } from "../errors";
import { logError } from "../lib/log";

/** A published Ed25519 verification key: the spec's key set item, which verifies EdDSA. */
export interface PublicSigningKey {
  kty: "OKP";
  crv: "Ed25519";
  x: string;
  kid: string;
  alg: "EdDSA";
  use: "sig";
}

/** A published P-256 verification key, which verifies ES256 (docs/architecture.md, issue 42). */
export interface PublicEs256Key {
  kty: "EC";
  crv: "P-256";
  x: string;
  y: string;
  kid: string;
  alg: "ES256";
  use: "sig";
}

/** Any key of `/.well-known/jwks.json`; its `alg` says which artefacts it verifies. */
export type PublishedKey = PublicSigningKey | PublicEs256Key;

/**
 * The ES256 half of the signer (SIGNING_KEY_ES256): what a verifier without EdDSA must check
 * (AP2 Mandate Receipts, and issue 42's later artefacts) is signed with it.
 */
export interface Es256Signer {
  /** The current ES256 key's kid, or null when none is deployed or it is unusable. */
  kid: string | null;
  /** The current ES256 key first (when usable), then retired P-256 keys. */
  keys: PublicEs256Key[];
  /**
   * A compact JWS (ES256) over JSON claims, with `kid` and `typ` in the protected header.
   * A missing or unusable SIGNING_KEY_ES256 is a 503 `signing_key_unavailable` here, and only
   * here: what is signed with Ed25519 goes on.
   */
  signClaims(claims: JWTPayload, typ: string): Promise<string>;
}

export interface Signer {
  /** The current Ed25519 key's kid. */
  kid: string;
  /** The Ed25519 keys, which verify EdDSA: the current key first, then retired ones. */
  keys: PublicSigningKey[];
  /**
   * The whole key set as `/.well-known/jwks.json` publishes it: the current Ed25519 key, the
   * current ES256 key (when usable), then the retired keys of either kind.
   */
  published: PublishedKey[];
  es256: Es256Signer;
  /** A compact JWS (EdDSA) over JSON claims, with `kid` and `typ` in the protected header. */
  signClaims(claims: JWTPayload, typ: string): Promise<string>;
  /** A compact JWS (EdDSA) over exact bytes, for payloads verified as received (webhooks). */
  signBytes(payload: Uint8Array, typ: string): Promise<string>;
  /**
   * A detached compact JWS (RFC 7515 appendix F, `header..signature`) over exact bytes the
   * receiver already holds (a webhook body), with the signing time as `iat` in the header.
   * `extra` adds protected header parameters (and may set `iat`); never `alg`, `kid`, `typ`.
   */
  signDetached(
    payload: Uint8Array,
    typ: string,
    extra?: Record<string, string | number>,
  ): Promise<string>;
}

function isEd25519(jwk: JWK): boolean {
  return jwk.kty === "OKP" && jwk.crv === "Ed25519" && typeof jwk.x === "string";
}

async function publicKey(jwk: JWK): Promise<PublicSigningKey> {
  const base = { kty: "OKP" as const, crv: "Ed25519" as const, x: jwk.x as string };
  return { ...base, kid: await calculateJwkThumbprint(base, "sha256"), alg: "EdDSA", use: "sig" };
}

function isP256(jwk: JWK): boolean {
  return (
    jwk.kty === "EC" &&
    jwk.crv === "P-256" &&
    typeof jwk.x === "string" &&
    typeof jwk.y === "string"
  );
}

async function publicEs256Key(jwk: JWK): Promise<PublicEs256Key> {
  const base = {
    kty: "EC" as const,
    crv: "P-256" as const,
    x: jwk.x as string,
    y: jwk.y as string,
  };
  return { ...base, kid: await calculateJwkThumbprint(base, "sha256"), alg: "ES256", use: "sig" };
}

/** Retired keys of either kind, public halves only. */
function parseRetired(retired: string | undefined): JWK[] {
  const old = retired ? (JSON.parse(retired) as JWK[]) : [];
  if (!Array.isArray(old) || !old.every((k) => (isEd25519(k) || isP256(k)) && k.d === undefined)) {
    throw new Error("retired keys must be Ed25519 or P-256 public JWKs");
  }
  return old;
}

interface Es256Key {
  current: PublicEs256Key;
  privateKey: CryptoKey | Uint8Array;
}

async function buildEs256Key(secret: string): Promise<Es256Key> {
  const jwk = JSON.parse(secret) as JWK;
  if (!isP256(jwk) || typeof jwk.d !== "string") throw new Error("not a P-256 private JWK");
  const current = await publicEs256Key(jwk);
  const privateKey = await importJWK({ ...jwk, alg: "ES256" }, "ES256");
  const verifyKey = await importJWK({ ...current }, "ES256");
  const probe = await new CompactSign(new Uint8Array([1]))
    .setProtectedHeader({ alg: "ES256" })
    .sign(privateKey);
  await compactVerify(probe, verifyKey);
  return { current, privateKey };
}

async function buildSigner(
  secret: string,
  retired: string | undefined,
  es256Secret: string | undefined,
): Promise<Signer> {
  const jwk = JSON.parse(secret) as JWK;
  if (!isEd25519(jwk) || typeof jwk.d !== "string") throw new Error("not an Ed25519 private JWK");
  const current = await publicKey(jwk);
  const privateKey = await importJWK({ ...jwk, alg: "EdDSA" }, "EdDSA");
  // Prove the private half matches the published public half before anything is signed with it.
  const verifyKey = await importJWK({ ...current }, "EdDSA");
  const probe = await new CompactSign(new Uint8Array([1]))
    .setProtectedHeader({ alg: "EdDSA" })
    .sign(privateKey);
  await compactVerify(probe, verifyKey);

  const old = parseRetired(retired);
  const unique = <K extends PublishedKey>(key: K, i: number, all: K[]) =>
    all.findIndex((k) => k.kid === key.kid) === i;
  const keys = [current, ...(await Promise.all(old.filter(isEd25519).map(publicKey)))].filter(
    unique,
  );
  // The ES256 key fails on its own: an unusable one stops what it signs, not the rest.
  const es256Key = es256Secret
    ? await buildEs256Key(es256Secret).catch(() => {
        logError("ES256 signing key unusable");
        return null;
      })
    : null;
  const retiredEs256 = await Promise.all(old.filter(isP256).map(publicEs256Key));
  const currentEs256 = es256Key ? [es256Key.current] : [];
  const es256Keys = [...currentEs256, ...retiredEs256].filter(unique);
  const header = (typ: string) => ({ alg: "EdDSA", kid: current.kid, typ });
  return {
    kid: current.kid,
    keys,
    published: [current, ...currentEs256, ...keys.slice(1), ...retiredEs256].filter(unique),
    es256: {
      kid: es256Key?.current.kid ?? null,
      keys: es256Keys,
      signClaims: async (claims, typ) => {
        if (!es256Key) throw new ApiError("signing_key_unavailable");
        return new SignJWT(claims)
          .setProtectedHeader({ alg: "ES256", kid: es256Key.current.kid, typ })
          .sign(es256Key.privateKey);
      },
    },
    signClaims: (claims, typ) =>
      new SignJWT(claims).setProtectedHeader(header(typ)).sign(privateKey),
    signBytes: (payload, typ) =>
      new CompactSign(payload).setProtectedHeader(header(typ)).sign(privateKey),
    signDetached: async (payload, typ, extra = {}) => {
      const iat = Math.floor(Date.now() / 1000);
      const jws = await new CompactSign(payload)
        .setProtectedHeader({ iat, ...extra, ...header(typ) })
        .sign(privateKey);
      const [protectedHeader, , signature] = jws.split(".");
      return `${protectedHeader}..${signature}`;
    },
  };
}

// Parsed once per isolate per secret value: importing and probing a key costs more than a
// signature, and a rotated secret arrives as a new value.
const signers = new Map<string, Promise<Signer>>();

/** The one signer. A missing or unusable key is a 503: the service never answers unsigned. */
export async function signer(env: Env): Promise<Signer> {
  const secret = env.SIGNING_KEY;
  if (!secret) throw new ApiError("signing_key_unavailable");
  const cacheKey = `${secret}\n${env.SIGNING_KEYS_RETIRED ?? ""}\n${env.SIGNING_KEY_ES256 ?? ""}`;
  let pending = signers.get(cacheKey);
  if (!pending) {
    pending = buildSigner(secret, env.SIGNING_KEYS_RETIRED, env.SIGNING_KEY_ES256);
    signers.set(cacheKey, pending);
    pending.catch(() => signers.delete(cacheKey));
  }
  try {
    return await pending;
  } catch (cause) {
    logError("signing key unusable");
    throw new ApiError("signing_key_unavailable", undefined, { cause });
  }
}
