import { createHash } from "node:crypto";

/**
 * Ed25519 signature verification (RFC 8032 §5.1.7) in plain BigInt arithmetic: an
 * implementation that shares no code with the service's signer (jose over WebCrypto in workerd,
 * BoringSSL) nor with node:crypto (OpenSSL), so a test that checks a signature with both has two
 * independent witnesses. Only SHA-512 comes from node:crypto. Slow (milliseconds per signature)
 * and not constant time: for tests only, never for secrets.
 */

const P = 2n ** 255n - 19n;
const L = 2n ** 252n + 27742317777372353535851937790883648493n;

function mod(a: bigint, m = P): bigint {
  const r = a % m;
  return r >= 0n ? r : r + m;
}

function pow(base: bigint, exponent: bigint): bigint {
  let result = 1n;
  let b = mod(base);
  let e = exponent;
  while (e > 0n) {
    if (e & 1n) result = mod(result * b);
    b = mod(b * b);
    e >>= 1n;
  }
  return result;
}

const inv = (a: bigint) => pow(a, P - 2n);
const D = mod(-121665n * inv(121666n));
const SQRT_M1 = pow(2n, (P - 1n) / 4n);

/** Extended homogeneous coordinates (X, Y, Z, T) with x = X/Z, y = Y/Z, xy = T/Z. */
type Point = readonly [bigint, bigint, bigint, bigint];

const IDENTITY: Point = [0n, 1n, 1n, 0n];

/** RFC 8032 §5.1.4 addition; complete for a = −1, so it also doubles. */
function add([x1, y1, z1, t1]: Point, [x2, y2, z2, t2]: Point): Point {
  const a = mod((y1 - x1) * (y2 - x2));
  const b = mod((y1 + x1) * (y2 + x2));
  const c = mod(t1 * 2n * D * t2);
  const d = mod(z1 * 2n * z2);
  const e = b - a;
  const f = d - c;
  const g = d + c;
  const h = b + a;
  return [mod(e * f), mod(g * h), mod(f * g), mod(e * h)];
}

function multiply(point: Point, scalar: bigint): Point {
  let result = IDENTITY;
  let addend = point;
  let k = scalar;
  while (k > 0n) {
    if (k & 1n) result = add(result, addend);
    addend = add(addend, addend);
    k >>= 1n;
  }
  return result;
}

function littleEndian(bytes: Uint8Array): bigint {
  let n = 0n;
  for (let i = bytes.length - 1; i >= 0; i--) n = (n << 8n) | BigInt(bytes[i] ?? 0);
  return n;
}

function encode([x, y, z]: Point): Uint8Array {
  const zi = inv(z);
  const ax = mod(x * zi);
  const ay = mod(y * zi);
  const out = new Uint8Array(32);
  let n = ay;
  for (let i = 0; i < 32; i++) {
    out[i] = Number(n & 0xffn);
    n >>= 8n;
  }
  out[31] = (out[31] ?? 0) | (Number(ax & 1n) << 7);
  return out;
}

/** RFC 8032 §5.1.3 decoding; null for an encoding that is not a point. */
function decode(bytes: Uint8Array): Point | null {
  if (bytes.length !== 32) return null;
  const copy = Uint8Array.from(bytes);
  const sign = BigInt((copy[31] ?? 0) >> 7);
  copy[31] = (copy[31] ?? 0) & 0x7f;
  const y = littleEndian(copy);
  if (y >= P) return null;
  const u = mod(y * y - 1n);
  const v = mod(D * y * y + 1n);
  let x = mod(u * pow(v, 3n) * pow(u * pow(v, 7n), (P - 5n) / 8n));
  const vx2 = mod(v * x * x);
  if (vx2 === mod(-u)) x = mod(x * SQRT_M1);
  else if (vx2 !== u) return null;
  if (x === 0n && sign === 1n) return null;
  if ((x & 1n) !== sign) x = P - x;
  return [x, y, 1n, mod(x * y)];
}

const BASE = decode(
  Uint8Array.from(
    Buffer.from("5866666666666666666666666666666666666666666666666666666666666666", "hex"),
  ),
) as Point;

/** True when `signature` is a valid Ed25519 signature of `message` under the 32-byte public key. */
export function ed25519Verify(
  publicKey: Uint8Array,
  message: Uint8Array,
  signature: Uint8Array,
): boolean {
  if (publicKey.length !== 32 || signature.length !== 64) return false;
  const a = decode(publicKey);
  const rBytes = signature.subarray(0, 32);
  const s = littleEndian(signature.subarray(32));
  if (!a || !decode(rBytes) || s >= L) return false;
  const k = mod(
    littleEndian(createHash("sha512").update(rBytes).update(publicKey).update(message).digest()),
    L,
  );
  // Cofactorless check: encode([S]B − [k]A) equals R byte for byte.
  const negA: Point = [mod(-a[0]), a[1], a[2], mod(-a[3])];
  const candidate = encode(add(multiply(BASE, s), multiply(negA, k)));
  return candidate.every((byte, i) => byte === rBytes[i]);
}
