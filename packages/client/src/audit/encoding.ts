// The byte encoders of the service: hex, base64 and base64url. Decoders come in two kinds:
// `fromBase64url` reads what JOSE peers send (it is as lenient as `atob`), while the strict
// ones accept exactly one text per byte string, so a signed value cannot be re-spelled.

const HEX = /^(?:[0-9a-fA-F]{2})*$/;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const BASE64_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const encoder = new TextEncoder();
/** Each byte's two hex digits: one lookup per byte instead of a number-to-string conversion. */
const HEX_OF_BYTE = Array.from({ length: 256 }, (_, b) => b.toString(16).padStart(2, "0"));
/** Bytes per `String.fromCharCode` call, well under any engine's argument limit. */
const CHUNK = 8192;

export function utf8(text: string): Uint8Array {
  return encoder.encode(text);
}

/** Lowercase hex, the form every hash takes in the ledger's rows and APIs. */
export function toHex(bytes: Uint8Array): string {
  let hex = "";
  for (const b of bytes) hex += HEX_OF_BYTE[b];
  return hex;
}

/** Accepts either case; throws on odd length or a non-hex character. */
export function hexToBytes(hex: string): Uint8Array {
  if (!HEX.test(hex)) throw new TypeError("not a hex string");
  const bytes = new Uint8Array(hex.length / 2);
  for (let i = 0; i < bytes.length; i++)
    bytes[i] = Number.parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return bytes;
}

/** Exactly 32 bytes of hex, or a TypeError naming what was expected. */
export function hashBytes(hex: string, what = "hash"): Uint8Array {
  const bytes = hexToBytes(hex);
  if (bytes.length !== 32) throw new TypeError(`${what} is not 32 bytes of hex`);
  return bytes;
}

/** Standard base64 (RFC 4648 §4) with padding, as C2SP checkpoints write root hashes. */
export function bytesToBase64(bytes: Uint8Array): string {
  return btoa(binaryString(bytes));
}

/**
 * Strict: padding required and the encoding must be canonical (unused bits zero), so one byte
 * string has exactly one accepted text and a signed note cannot be re-spelled.
 */
export function base64ToBytes(text: string): Uint8Array {
  if (!BASE64.test(text) || !unusedBitsZero(text)) throw new TypeError("not canonical base64");
  return bytesOfBinary(atob(text));
}

/**
 * Given text of the BASE64 pattern, whether the bits the padding leaves unused are zero: the one
 * way two texts can decode to the same bytes. Cheaper than encoding the bytes again to compare.
 */
function unusedBitsZero(text: string): boolean {
  if (text.endsWith("=="))
    return (BASE64_ALPHABET.indexOf(text.charAt(text.length - 3)) & 0xf) === 0;
  if (text.endsWith("="))
    return (BASE64_ALPHABET.indexOf(text.charAt(text.length - 2)) & 0x3) === 0;
  return true;
}

/** Unpadded base64url (RFC 4648 §5), as JWS uses. */
export function base64url(bytes: Uint8Array): string {
  return bytesToBase64(bytes).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

/** Strict unpadded base64url: the canonical text of its bytes, nothing else. */
export function base64UrlToBytes(text: string): Uint8Array {
  if (/[+/=]/.test(text)) throw new TypeError("not base64url");
  const standard = text.replaceAll("-", "+").replaceAll("_", "/");
  return base64ToBytes(standard + "=".repeat((4 - (standard.length % 4)) % 4));
}

/**
 * Lenient base64url, as JOSE libraries read it (padding and non-canonical trailing bits are
 * accepted); throws on characters outside the alphabet. Where a value must be canonical,
 * use `base64UrlToBytes` or `isCanonicalBase64url`.
 */
export function fromBase64url(text: string): Uint8Array {
  const padded = text.replaceAll("-", "+").replaceAll("_", "/");
  return bytesOfBinary(atob(padded + "=".repeat((4 - (padded.length % 4)) % 4)));
}

// The hot path encodes and decodes a few dozen keys, hashes and signatures per assessment: a
// char-by-char string build and `Uint8Array.from` with a callback showed in its CPU profile
// (docs/performance.md, "Where the Worker's CPU goes").

/** One char per byte (what `btoa` takes), built in chunks rather than a char at a time. */
function binaryString(bytes: Uint8Array): string {
  if (bytes.length <= CHUNK) return String.fromCharCode(...bytes);
  let binary = "";
  for (let i = 0; i < bytes.length; i += CHUNK) {
    binary += String.fromCharCode(...bytes.subarray(i, i + CHUNK));
  }
  return binary;
}

/** The bytes of a binary string (what `atob` answers: every char below 256). */
function bytesOfBinary(binary: string): Uint8Array {
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}
