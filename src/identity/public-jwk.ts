/**
 * Registration of agent public keys: what a JWK must be before the service stores it and later
 * verifies an agent's signatures with it.
 *
 * Accepted: OKP Ed25519, EC P-256, and RSA of 2048 to 8192 bits, public members only. Every
 * key-material member must be unpadded base64url in canonical form, and an RSA modulus or
 * exponent must have no leading zero octet (RFC 7518 §6.3.1): one key has exactly one encoding,
 * so one thumbprint, and the same key cannot be registered twice under two thumbprints. The
 * thumbprint is computed exactly as the agent computes it from the JWK it sent.
 *
 * The stored JWK keeps only the members the RFC 7638 thumbprint commits to (kty, crv, x, y, n,
 * e). `alg`, `use` and `key_ops` are checked against the key and then dropped (the resolved alg
 * is returned on its own); `kid`, `x5c`, `x5u`, `ext` and any other member are ignored and
 * dropped. So nothing the thumbprint does not cover, and nothing the service never verified
 * (a certificate chain, a URL), travels with the stored key. The thumbprint identifies it.
 */
import { calculateJwkThumbprint, importJWK, type JWK } from "jose";
import { base64url, fromBase64url, toHex } from "#audit/encoding";
import { ApiError } from "../errors";

export interface PublicKey {
  /** Only the thumbprint members: kty, crv and x (Ed25519); kty, crv, x and y (P-256); kty, n and e (RSA). */
  jwk: JWK;
  /** RFC 7638 JWK thumbprint, SHA-256, base64url. */
  thumbprint: string;
  kty: "OKP" | "EC" | "RSA";
  crv: string | null;
  /** The JWS alg this key verifies: the JWK's own alg when it sent one, else the default. */
  alg: string;
}

interface Problem {
  path: string;
  message: string;
}

type Members = Record<string, unknown>;

interface KeyType {
  kty: PublicKey["kty"];
  crv: string | null;
  members: string[];
  /** Accepted algs, the default first. */
  algs: string[];
  material(jwk: Members): Problem[];
}

// Every member that carries private or secret key material in any JWK key type.
const PRIVATE_MEMBERS = ["d", "p", "q", "dp", "dq", "qi", "oth", "k", "priv"];
const MIN_RSA_BITS = 2048;
// Past this, verification costs grow for no security anyone needs; nothing real is larger.
const MAX_RSA_BITS = 8192;

const keyTypes: Record<string, KeyType> = {
  OKP: {
    kty: "OKP",
    crv: "Ed25519",
    members: ["x"],
    algs: ["EdDSA", "Ed25519"],
    material: (jwk) => ed25519Problems(jwk.x as string),
  },
  EC: {
    kty: "EC",
    crv: "P-256",
    members: ["x", "y"],
    algs: ["ES256"],
    material: (jwk) =>
      ["x", "y"]
        .filter((m) => fromBase64url(jwk[m] as string).length !== 32)
        .map((m) => ({ path: `jwk.${m}`, message: "must be 32 bytes for P-256" })),
  },
  RSA: {
    kty: "RSA",
    crv: null,
    members: ["n", "e"],
    algs: ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512"],
    material: (jwk) => rsaProblems(fromBase64url(jwk.n as string), fromBase64url(jwk.e as string)),
  },
};

/** Every JWS alg some registered key can verify: nothing else (none, HMAC, ES384…) ever does. */
export const SIGNATURE_ALGS: ReadonlySet<string> = new Set(
  Object.values(keyTypes).flatMap((type) => type.algs),
);

function refuse(problems: Problem[], cause?: unknown): never {
  throw new ApiError("invalid_request", problems, { cause });
}

function isCanonicalBase64url(value: unknown): value is string {
  return (
    typeof value === "string" &&
    /^[A-Za-z0-9_-]+$/.test(value) &&
    value.length % 4 !== 1 &&
    base64url(fromBase64url(value)) === value
  );
}

function bitLength(bytes: Uint8Array): number {
  const first = bytes.findIndex((b) => b !== 0);
  if (first < 0) return 0;
  return (bytes.length - first - 1) * 8 + (32 - Math.clz32(bytes[first] as number));
}

function rsaProblems(n: Uint8Array, e: Uint8Array): Problem[] {
  const problems: Problem[] = [];
  const bits = bitLength(n);
  if (n[0] === 0) problems.push({ path: "jwk.n", message: "must have no leading zero octet" });
  else if (bits < MIN_RSA_BITS || bits > MAX_RSA_BITS) {
    problems.push({
      path: "jwk.n",
      message: `modulus must be ${MIN_RSA_BITS} to ${MAX_RSA_BITS} bits`,
    });
  } else if (((n[n.length - 1] as number) & 1) === 0) {
    problems.push({ path: "jwk.n", message: "an RSA modulus is odd" });
  }
  // An odd exponent from 3 to 2^32 - 1: what WebCrypto and every RSA library accept.
  if (e[0] === 0 || e.length > 4 || ((e[e.length - 1] as number) & 1) === 0 || bitLength(e) < 2) {
    problems.push({
      path: "jwk.e",
      message: "must be an odd exponent from 3 to 2^32 - 1, no leading zero",
    });
  }
  return problems;
}

// Ed25519 over GF(p), p = 2^255 - 19, curve -x^2 + y^2 = 1 + d x^2 y^2. WebCrypto imports any
// 32 bytes as an Ed25519 public key, so decompression is checked here.
const P = 2n ** 255n - 19n;
const mod = (a: bigint) => ((a % P) + P) % P;
function pow(base: bigint, exponent: bigint): bigint {
  let result = 1n;
  for (let b = mod(base), e = exponent; e > 0n; e >>= 1n, b = (b * b) % P) {
    if (e & 1n) result = (result * b) % P;
  }
  return result;
}
const inverse = (a: bigint) => pow(a, P - 2n);
const D = mod(-121665n * inverse(121666n));

/** (x², y) of 2·(x, y), by the complete Edwards addition law (a = -1). */
function double([xx, y]: [bigint, bigint]): [bigint, bigint] {
  const yy = (y * y) % P;
  const x = mod(2n * y) * inverse(mod(yy - xx));
  return [mod(x * x * xx), mod((yy + xx) * inverse(mod(2n + xx - yy)))];
}

function ed25519Problems(x: string): Problem[] {
  const bytes = fromBase64url(x);
  if (bytes.length !== 32) return [{ path: "jwk.x", message: "must be 32 bytes for Ed25519" }];
  const sign = (bytes[31] as number) >> 7;
  // Little-endian y; the top bit is the sign of x.
  const y = BigInt(`0x${toHex(bytes.slice().reverse())}`) & (2n ** 255n - 1n);
  const xx = mod((y * y - 1n) * inverse(mod(D * y * y + 1n)));
  const onCurve = y < P && (xx === 0n ? sign === 0 : pow(xx, (P - 1n) / 2n) === 1n);
  if (!onCurve) return [{ path: "jwk.x", message: "is not a point on Ed25519" }];
  // A point of order 1, 2, 4 or 8 has no secret behind it: signatures under it can be forged.
  const eightfold = double(double(double([xx, y])));
  if (eightfold[1] === 1n) return [{ path: "jwk.x", message: "is a small-order point, not a key" }];
  return [];
}

function metadataProblems(jwk: Members, type: KeyType): Problem[] {
  const problems: Problem[] = [];
  if (jwk.alg !== undefined && !type.algs.includes(jwk.alg as string)) {
    problems.push({ path: "jwk.alg", message: `must be ${type.algs.join(" or ")} for this key` });
  }
  if (jwk.use !== undefined && jwk.use !== "sig") {
    problems.push({
      path: "jwk.use",
      message: 'must be "sig": only signature keys are registered',
    });
  }
  const ops = jwk.key_ops;
  if (ops !== undefined && !(Array.isArray(ops) && ops.length === 1 && ops[0] === "verify")) {
    problems.push({
      path: "jwk.key_ops",
      message: 'must be ["verify"] for a public signature key',
    });
  }
  return problems;
}

function keyType(jwk: Members): KeyType {
  const type = typeof jwk.kty === "string" ? keyTypes[jwk.kty] : undefined;
  if (!type) refuse([{ path: "jwk.kty", message: "must be OKP (Ed25519), EC (P-256) or RSA" }]);
  return type;
}

function validate(jwk: Members, type: KeyType): Problem[] {
  const problems: Problem[] = [];
  if (type.crv !== null && jwk.crv !== type.crv) {
    problems.push({ path: "jwk.crv", message: `must be ${type.crv} for kty ${type.kty}` });
  }
  for (const m of type.members.filter((m) => !isCanonicalBase64url(jwk[m]))) {
    problems.push({ path: `jwk.${m}`, message: "must be unpadded base64url in canonical form" });
  }
  // Key sizes and points mean something only for the right curve and readable members.
  if (problems.length === 0) problems.push(...type.material(jwk));
  return [...problems, ...metadataProblems(jwk, type)];
}

function thumbprintMembers(jwk: Members, type: KeyType): JWK {
  const picked: Members = { kty: type.kty };
  if (type.crv !== null) picked.crv = type.crv;
  for (const m of type.members) picked[m] = jwk[m];
  return picked as JWK;
}

/**
 * Validates an agent's public key and returns it reduced to its thumbprint members. Throws
 * `invalid_request` with one `{path, message}` per problem, paths under `jwk`.
 */
export async function parsePublicJwk(input: unknown): Promise<PublicKey> {
  if (typeof input !== "object" || input === null || Array.isArray(input)) {
    refuse([{ path: "jwk", message: "must be a JSON Web Key object" }]);
  }
  const members = input as Members;
  const secret = PRIVATE_MEMBERS.filter((m) => m in members);
  if (secret.length > 0) {
    refuse(
      secret.map((m) => ({
        path: `jwk.${m}`,
        message:
          "private key material is never accepted: send the public key only, and rotate this " +
          "key now, since its private part has been sent to a third party",
      })),
    );
  }
  const type = keyType(members);
  const problems = validate(members, type);
  if (problems.length > 0) refuse(problems);

  const jwk = thumbprintMembers(members, type);
  const alg = (members.alg as string | undefined) ?? (type.algs[0] as string);
  const thumbprint = await calculateJwkThumbprint(jwk, "sha256");
  // The import is the final check (a P-256 point off the curve fails here), and warms the cache.
  await cachedKey(thumbprint, jwk, alg).catch((cause: unknown) =>
    refuse([{ path: "jwk", message: `is not a valid ${type.crv ?? "RSA"} public key` }], cause),
  );
  return { jwk, thumbprint, kty: type.kty, crv: type.crv, alg };
}

// Imported keys by alg and thumbprint, per isolate: an agent signs many times with one key.
// Bounded, oldest first out, since the keys of every org pass through one isolate.
const MAX_CACHED_KEYS = 1000;
const verificationKeys = new Map<string, Promise<CryptoKey>>();

async function importVerificationKey(jwk: JWK, alg: string): Promise<CryptoKey> {
  const type = typeof jwk.kty === "string" ? keyTypes[jwk.kty] : undefined;
  if (!type) throw new Error("not a registered public key type");
  const key = await importJWK(thumbprintMembers(jwk as Members, type), alg, { extractable: false });
  if (!(key instanceof CryptoKey)) throw new Error("not an asymmetric key");
  return key;
}

function cachedKey(thumbprint: string, jwk: JWK, alg: string): Promise<CryptoKey> {
  const id = `${alg}.${thumbprint}`;
  let pending = verificationKeys.get(id);
  if (!pending) {
    pending = importVerificationKey(jwk, alg);
    verificationKeys.set(id, pending);
    pending.catch(() => verificationKeys.delete(id));
    const oldest = verificationKeys.keys().next().value;
    if (verificationKeys.size > MAX_CACHED_KEYS && oldest) verificationKeys.delete(oldest);
  }
  return pending;
}

/**
 * The CryptoKey that verifies `alg` signatures under a key that parsePublicJwk accepted (as
 * stored: its JWK and alg). Only the thumbprint members are imported.
 */
export async function verificationKey(jwk: JWK, alg: string): Promise<CryptoKey> {
  return await cachedKey(await calculateJwkThumbprint(jwk, "sha256"), jwk, alg);
}
