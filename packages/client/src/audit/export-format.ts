import type { Party } from "./chain.js";
import { type CheckpointRecord, logIdFor, type VerificationKey } from "./checkpoint.js";
import { type AuditEntryRecord, AuditVerifier, type VerifyReport } from "./verify.js";

/**
 * The audit export, JSON Lines: a header, the entries in sequence order with each checkpoint
 * right after the entry at its tree_size, and an end line whose absence means truncation.
 *
 * An entry line nests its record under "entry" because the record has a `type` field of its
 * own (e.g. "org.created") that would collide with the line's `type`. Producers should build
 * lines with the format* functions below so writer and verifier cannot drift apart.
 */
export const EXPORT_FORMAT = "agent-risk-audit-export/1";

export interface ExportHeader {
  type: "header";
  format: typeof EXPORT_FORMAT;
  org_id: string;
  log_id: string;
  exported_at: string;
  keys: VerificationKey[];
}

export type ExportLine =
  | ExportHeader
  | { type: "entry"; entry: AuditEntryRecord }
  | { type: "checkpoint"; checkpoint: CheckpointRecord }
  | { type: "end"; entries: number; checkpoints: number };

export function formatHeaderLine(h: Omit<ExportHeader, "type" | "format">): string {
  const keys = h.keys.map(({ kid, x, kty, crv }) => ({
    kty: kty ?? "OKP",
    crv: crv ?? "Ed25519",
    x,
    kid,
  }));
  const header = { type: "header", format: EXPORT_FORMAT, org_id: h.org_id, log_id: h.log_id };
  return JSON.stringify({ ...header, exported_at: h.exported_at, keys });
}

export function formatEntryLine(e: AuditEntryRecord): string {
  const { id, sequence, type, actor, subject, digest, time, prev_hash, hash } = e;
  const party = (p: Party) => ({ type: p.type, id: p.id });
  const entry = { id, sequence, type, actor: party(actor), subject: subject && party(subject) };
  return JSON.stringify({ type: "entry", entry: { ...entry, digest, time, prev_hash, hash } });
}

export function formatCheckpointLine(c: CheckpointRecord): string {
  const { log_id, tree_size, root_hash, time, note, jws, previous_tree_size, consistency_proof } =
    c;
  const record = { log_id, tree_size, root_hash, time, note, jws, previous_tree_size };
  return JSON.stringify({ type: "checkpoint", ...record, consistency_proof });
}

export function formatEndLine(entries: number, checkpoints: number): string {
  return JSON.stringify({ type: "end", entries, checkpoints });
}

/** One line, parsed and shape-checked (types only: the verifier judges the values). Throws. */
export function parseExportLine(line: string): ExportLine {
  const value: unknown = JSON.parse(line);
  const o = record(value, "line");
  switch (o.type) {
    case "header": {
      if (o.format !== EXPORT_FORMAT) throw new Error(`unsupported format ${String(o.format)}`);
      if (!Array.isArray(o.keys)) throw new Error("header.keys is not an array");
      const keys = o.keys.map((k) => {
        const key = record(k, "key");
        return { ...key, kid: str(key, "kid"), x: str(key, "x") } as VerificationKey;
      });
      const ids = { org_id: str(o, "org_id"), log_id: str(o, "log_id") };
      return {
        type: "header",
        format: EXPORT_FORMAT,
        ...ids,
        exported_at: str(o, "exported_at"),
        keys,
      };
    }
    case "entry": {
      const e = record(o.entry, "entry");
      const entry: AuditEntryRecord = {
        id: str(e, "id"),
        sequence: int(e, "sequence"),
        type: str(e, "type"),
        actor: party(e.actor, "actor"),
        subject: e.subject === null ? null : party(e.subject, "subject"),
        digest: str(e, "digest"),
        time: str(e, "time"),
        prev_hash: str(e, "prev_hash"),
        hash: str(e, "hash"),
      };
      return { type: "entry", entry };
    }
    case "checkpoint": {
      const proof = o.consistency_proof;
      if (!Array.isArray(proof) || !proof.every((h) => typeof h === "string")) {
        throw new Error("checkpoint.consistency_proof is not an array of strings");
      }
      const checkpoint: CheckpointRecord = {
        log_id: str(o, "log_id"),
        tree_size: int(o, "tree_size"),
        root_hash: str(o, "root_hash"),
        time: str(o, "time"),
        note: str(o, "note"),
        jws: str(o, "jws"),
        previous_tree_size: int(o, "previous_tree_size"),
        consistency_proof: proof,
      };
      return { type: "checkpoint", checkpoint };
    }
    case "end":
      return { type: "end", entries: int(o, "entries"), checkpoints: int(o, "checkpoints") };
    default:
      throw new Error(`unknown line type ${JSON.stringify(o.type)}`);
  }
}

/** A line that is not the export format at all (as opposed to an export that fails checks). */
export class ExportFormatError extends Error {
  constructor(
    readonly line: number,
    message: string,
  ) {
    super(`line ${line}: ${message}`);
    this.name = "ExportFormatError";
  }
}

export interface ExportVerification {
  report: VerifyReport;
  header: ExportHeader;
  /** The end line is missing, or its counts disagree with the lines read. */
  truncated: boolean;
}

/**
 * Verifies an export line by line in constant memory (plus O(log n)). The keys default to the
 * header's; pass keys obtained independently (the service's /.well-known/jwks.json) to make
 * the signatures mean something against someone who could rewrite the whole file. A truncated
 * export fails: `report.ok` is false even if every line read verified.
 * Throws ExportFormatError for a line that is not valid export syntax.
 */
export async function verifyExport(
  lines: AsyncIterable<string>,
  options: { keys?: VerificationKey[] } = {},
): Promise<ExportVerification> {
  let header: ExportHeader | undefined;
  let verifier: AuditVerifier | undefined;
  let end: { entries: number; checkpoints: number } | undefined;
  let entries = 0;
  let checkpoints = 0;
  let number = 0;
  for await (const raw of lines) {
    number++;
    if (raw.trim() === "") continue;
    if (end) throw new ExportFormatError(number, "content after the end line");
    let line: ExportLine;
    try {
      line = parseExportLine(raw);
    } catch (error) {
      throw new ExportFormatError(number, (error as Error).message);
    }
    if (!header || !verifier) {
      if (line.type !== "header")
        throw new ExportFormatError(number, "the first line is not a header");
      if (line.log_id !== logIdFor(line.org_id)) {
        throw new ExportFormatError(number, "header.log_id is not the log id of header.org_id");
      }
      header = line;
      verifier = new AuditVerifier(line.org_id, options.keys ?? line.keys);
      continue;
    }
    if (line.type === "header") throw new ExportFormatError(number, "a second header");
    if (line.type === "entry") {
      entries++;
      verifier.addEntry(line.entry);
    } else if (line.type === "checkpoint") {
      checkpoints++;
      await verifier.addCheckpoint(line.checkpoint);
    } else {
      end = line;
    }
  }
  if (!header || !verifier) throw new ExportFormatError(number, "empty export: no header line");
  const report = await verifier.finish();
  const truncated = !end || end.entries !== entries || end.checkpoints !== checkpoints;
  if (truncated) report.ok = false;
  return { report, header, truncated };
}

function record(value: unknown, what: string): Record<string, unknown> {
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw new Error(`${what} is not an object`);
  }
  return value as Record<string, unknown>;
}

function str(o: Record<string, unknown>, field: string): string {
  const value = o[field];
  if (typeof value !== "string") throw new Error(`${field} is not a string`);
  return value;
}

function int(o: Record<string, unknown>, field: string): number {
  const value = o[field];
  if (!Number.isSafeInteger(value)) throw new Error(`${field} is not an integer`);
  return value as number;
}

function party(value: unknown, what: string): Party {
  const p = record(value, what);
  return { type: str(p, "type"), id: str(p, "id") };
}
