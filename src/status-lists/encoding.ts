/**
 * The Status List itself (draft-ietf-oauth-status-list §4.1, §4.2): a byte array of `bits`-wide
 * statuses packed from the least significant bit of each byte, compressed with DEFLATE in the
 * ZLIB format (RFC 1950/1951) and carried as base64url in `lst`. Pure compute; the streams are
 * the platform's (`CompressionStream("deflate")` is ZLIB in workerd, browsers and Node alike).
 */
import { base64UrlToBytes, base64url } from "#audit/encoding";

export const STATUS_BITS = [1, 2, 4, 8] as const;
export type StatusBits = (typeof STATUS_BITS)[number];

/** The Status Types of §7.1; other values are application specific or reserved. */
export const STATUS = { valid: 0, invalid: 1, suspended: 2 } as const;

/**
 * The largest decompressed list read: 2^20 entries of 8 bits (the draft's own test vectors,
 * Appendix "Test vectors"), twice over. A list past it is refused while inflating, so a small
 * `lst` that inflates without bound (a "zip bomb") costs at most this much.
 */
export const MAX_LIST_BYTES = 2 * 1024 * 1024;

export class StatusListUnreadable extends Error {
  override name = "StatusListUnreadable";
}

export function isStatusBits(value: unknown): value is StatusBits {
  return (STATUS_BITS as readonly unknown[]).includes(value);
}

/** The status at `idx` (§4.1 step 3), or null when the index is past the list's end. */
export function statusAt(bytes: Uint8Array, bits: StatusBits, idx: number): number | null {
  const perByte = 8 / bits;
  const byte = bytes[Math.floor(idx / perByte)];
  if (byte === undefined || !Number.isSafeInteger(idx) || idx < 0) return null;
  const shift = (idx % perByte) * bits;
  return (byte >> shift) & ((1 << bits) - 1);
}

/** Writes `status` at `idx`; the array must be long enough. */
export function setStatus(bytes: Uint8Array, bits: StatusBits, idx: number, status: number): void {
  const perByte = 8 / bits;
  const at = Math.floor(idx / perByte);
  const shift = (idx % perByte) * bits;
  const mask = ((1 << bits) - 1) << shift;
  bytes[at] = ((bytes[at] ?? 0) & ~mask) | ((status << shift) & mask);
}

/** `lst` of a byte array: ZLIB-compressed, base64url (§4.1 step 4, §4.2). */
export async function compressStatusList(bytes: Uint8Array): Promise<string> {
  const stream = new Blob([bytes]).stream().pipeThrough(new CompressionStream("deflate"));
  return base64url(new Uint8Array(await new Response(stream).arrayBuffer()));
}

/**
 * The byte array of an `lst`: base64url (lenient on padding, as JOSE readers are not), then
 * inflated as ZLIB, at most `maxBytes`. Throws StatusListUnreadable for anything else.
 */
export async function decompressStatusList(
  lst: string,
  maxBytes = MAX_LIST_BYTES,
): Promise<Uint8Array> {
  let compressed: Uint8Array;
  try {
    compressed = base64UrlToBytes(lst);
  } catch {
    throw new StatusListUnreadable("lst is not base64url");
  }
  const reader = new Blob([compressed])
    .stream()
    .pipeThrough(new DecompressionStream("deflate"))
    .getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.byteLength;
      if (total > maxBytes) throw new StatusListUnreadable(`inflates past ${maxBytes} bytes`);
      chunks.push(value);
    }
  } catch (error) {
    await reader.cancel().catch(() => {});
    if (error instanceof StatusListUnreadable) throw error;
    throw new StatusListUnreadable("lst is not ZLIB (DEFLATE) data");
  }
  const bytes = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return bytes;
}
