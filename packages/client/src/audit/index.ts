/**
 * `@agent-risk/client/audit`: offline verification of an audit export (the service's
 * `GET /v1/audit/export`, JSON Lines). Node 20 and Workers (with `nodejs_compat`): the chain
 * hashes with node:crypto's synchronous SHA-256, which is why this is its own entry point and
 * the main one stays WebCrypto-only for browsers.
 */
import type { VerificationKey } from "./checkpoint.js";
import { type ExportVerification, verifyExport } from "./export-format.js";

export type { CheckpointRecord, VerificationKey } from "./checkpoint.js";
export {
  EXPORT_FORMAT,
  ExportFormatError,
  type ExportHeader,
  type ExportLine,
  type ExportVerification,
} from "./export-format.js";
export type { AuditEntryRecord, BreakReason, CheckpointFailure, VerifyReport } from "./verify.js";

/** What an export can be read from: its text, a web stream, or any async iterable of chunks. */
export type AuditExportSource =
  | string
  | Uint8Array
  | ReadableStream<Uint8Array | string>
  | AsyncIterable<Uint8Array | string>;

export interface VerifyAuditExportOptions {
  /**
   * Keys obtained independently (the service's /.well-known/jwks.json, or a `{keys}` set).
   * Without them the export's own header keys are trusted, which proves the file is
   * self-consistent but not that the service wrote it.
   */
  jwks?: { keys: VerificationKey[] } | VerificationKey[];
}

/**
 * Verifies an audit export offline in constant memory: every entry's hash and link, every
 * checkpoint's signature, Merkle root and consistency with the one before, and the end line.
 * `report.ok` is false for a break, an invalid checkpoint or a truncated export; `truncated`
 * says which. Throws ExportFormatError when the input is not an audit export at all.
 */
export async function verifyAuditExport(
  source: AuditExportSource,
  options: VerifyAuditExportOptions = {},
): Promise<ExportVerification> {
  const keys = options.jwks && (Array.isArray(options.jwks) ? options.jwks : options.jwks.keys);
  return verifyExport(lines(source), keys ? { keys } : {});
}

/** The source's lines, decoded as UTF-8 across chunk boundaries; `\r\n` ends a line too. */
async function* lines(source: AuditExportSource): AsyncGenerator<string> {
  // Not fatal: a damaged byte becomes U+FFFD and then fails its hash, as any other change.
  const decoder = new TextDecoder();
  let rest = "";
  for await (const chunk of chunks(source)) {
    rest += typeof chunk === "string" ? chunk : decoder.decode(chunk, { stream: true });
    const parts = rest.split("\n");
    rest = parts.pop() ?? "";
    for (const part of parts) yield part.endsWith("\r") ? part.slice(0, -1) : part;
  }
  rest += decoder.decode();
  if (rest !== "") yield rest.endsWith("\r") ? rest.slice(0, -1) : rest;
}

async function* chunks(source: AuditExportSource): AsyncGenerator<Uint8Array | string> {
  if (typeof source === "string" || source instanceof Uint8Array) {
    yield source;
    return;
  }
  if (Symbol.asyncIterator in source) {
    yield* source as AsyncIterable<Uint8Array | string>;
    return;
  }
  // Workers' and older browsers' ReadableStream may lack async iteration: read it by hand.
  const reader = (source as ReadableStream<Uint8Array | string>).getReader();
  try {
    for (let next = await reader.read(); !next.done; next = await reader.read()) yield next.value;
  } finally {
    reader.releaseLock();
  }
}
