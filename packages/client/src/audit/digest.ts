import { createHash } from "node:crypto";
import { canonicalize } from "./canonical.js";
import { toHex, utf8 } from "./encoding.js";

// node:crypto rather than WebCrypto: crypto.subtle.digest is asynchronous, and the Durable
// Object hashes inside a critical section that must not await. workerd provides createHash
// synchronously under the `nodejs_compat` flag; Node has it natively.

/** SHA-256 of the concatenation of `parts`. */
export function sha256(...parts: Uint8Array[]): Uint8Array {
  const hash = createHash("sha256");
  for (const part of parts) hash.update(part);
  // A copy: Node may return a Buffer that is a view into a shared pool.
  return new Uint8Array(hash.digest());
}

/** Lowercase hex SHA-256 of a UTF-8 string. */
export function sha256Hex(text: string): string {
  return toHex(sha256(utf8(text)));
}

/** `sha256:<hex>` of the RFC 8785 form of a payload: what an entry says about its payload. */
export function payloadDigest(payload: unknown): string {
  return `sha256:${sha256Hex(canonicalize(payload))}`;
}
