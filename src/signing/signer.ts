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

/** A published verification key: the spec's key set item. */
export interface PublicSigningKey {
  kty: "OKP";
  crv: "Ed25519";
  x: string;
  kid: string;
  alg: "EdDSA";
  use: "sig";
}

export interface Signer {
  kid: string;
  /** The current key first, then retired keys still needed to verify old payloads. */
  keys: PublicSigningKey[];
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

async function buildSigner(secret: string, retired: string | undefined): Promise<Signer> {
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

  const old = retired ? (JSON.parse(retired) as JWK[]) : [];
  if (!Array.isArray(old) || !old.every((k) => isEd25519(k) && k.d === undefined)) {
    throw new Error("retired keys must be Ed25519 public JWKs");
  }
  const keys = [current, ...(await Promise.all(old.map(publicKey)))].filter(
    (key, i, all) => all.findIndex((k) => k.kid === key.kid) === i,
  );
  const header = (typ: string) => ({ alg: "EdDSA", kid: current.kid, typ });
  return {
    kid: current.kid,
    keys,
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
  const cacheKey = `${secret}\n${env.SIGNING_KEYS_RETIRED ?? ""}`;
  let pending = signers.get(cacheKey);
  if (!pending) {
    pending = buildSigner(secret, env.SIGNING_KEYS_RETIRED);
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
