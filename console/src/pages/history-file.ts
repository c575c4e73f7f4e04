/**
 * A history file as the retro study page reads it in the browser (docs/history.md, "Uploading
 * from the console"): NDJSON (one record of POST /v1/history/transactions a line) or CSV (a
 * header row naming the record's fields, flattened), each record with the file row it came
 * from, so that the API's errors (by index in a call) can be shown by row. Pure: no DOM.
 */

/** The CSV columns, in the order the page documents them; `payee_id` is `payee.id`, etc. */
export const CSV_COLUMNS = [
  "id",
  "occurred_at",
  "agent_id",
  "payee_id",
  "payee_name",
  "amount",
  "currency",
  "kind",
  "label",
  "labeled_at",
] as const;
type Column = (typeof CSV_COLUMNS)[number];

/** The dotted names of the JSON record, accepted as headers too. */
const ALIASES: Record<string, Column> = {
  "payee.id": "payee_id",
  "payee.name": "payee_name",
  "amount.amount": "amount",
  "amount.currency": "currency",
  "label.label": "label",
  "label.labeled_at": "labeled_at",
};

/** A fault of one row of the file (1-based, the header row of a CSV is row 1). */
export interface RowError {
  row: number;
  id: string | null;
  path: string;
  message: string;
}

export interface ParsedFile {
  format: "csv" | "ndjson";
  /** What is sent, as the API takes a record (its faults left to the API to name). */
  records: unknown[];
  /** `rows[i]` is the file row of `records[i]`. */
  rows: number[];
  /** Rows that could not become a record (not JSON, a CSV row of the wrong width). */
  errors: RowError[];
  /** A fault of the whole file (no header, an unknown column): nothing is sent. */
  fatal: string | null;
}

/** NDJSON when the name says so or the first non-blank character opens an object. */
export function parseHistoryFile(name: string, text: string): ParsedFile {
  const body = text.replace(/^\uFEFF/, "");
  const lower = name.toLowerCase();
  const ndjson =
    lower.endsWith(".ndjson") ||
    lower.endsWith(".jsonl") ||
    lower.endsWith(".json") ||
    (!lower.endsWith(".csv") && body.trimStart().startsWith("{"));
  return ndjson ? parseNdjson(body) : parseCsv(body);
}

export function parseNdjson(text: string): ParsedFile {
  const out: ParsedFile = { format: "ndjson", records: [], rows: [], errors: [], fatal: null };
  const lines = text.split(/\r?\n/);
  lines.forEach((line, i) => {
    if (line.trim() === "") return;
    try {
      out.records.push(JSON.parse(line) as unknown);
      out.rows.push(i + 1);
    } catch (error) {
      out.errors.push({
        row: i + 1,
        id: null,
        path: "",
        message: `not JSON: ${error instanceof Error ? error.message : String(error)}`,
      });
    }
  });
  return out;
}

/**
 * RFC 4180 records with the line each starts on: fields split by commas, a field in double
 * quotes may hold commas, line breaks and `""` for a quote. CRLF or LF.
 */
export function csvRecords(text: string): { line: number; fields: string[] }[] {
  const out: { line: number; fields: string[] }[] = [];
  let fields: string[] = [];
  let field = "";
  let quoted = false;
  let line = 1;
  let start = 1;
  let touched = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string;
    if (quoted) {
      if (c === '"') {
        if (text[i + 1] === '"') {
          field += '"';
          i++;
        } else quoted = false;
      } else {
        if (c === "\n") line++;
        field += c;
      }
      continue;
    }
    if (c === '"' && field === "") {
      quoted = true;
      touched = true;
    } else if (c === ",") {
      fields.push(field);
      field = "";
      touched = true;
    } else if (c === "\n" || c === "\r") {
      if (c === "\r" && text[i + 1] === "\n") i++;
      fields.push(field);
      if (touched || fields.some((f) => f !== "")) out.push({ line: start, fields });
      fields = [];
      field = "";
      touched = false;
      line++;
      start = line;
    } else {
      field += c;
      touched = true;
    }
  }
  if (touched || field !== "") {
    fields.push(field);
    out.push({ line: start, fields });
  }
  return out;
}

export function parseCsv(text: string): ParsedFile {
  const out: ParsedFile = { format: "csv", records: [], rows: [], errors: [], fatal: null };
  const [header, ...rows] = csvRecords(text);
  if (!header) {
    out.fatal = "the file is empty: a CSV starts with a header row naming the fields";
    return out;
  }
  const names = header.fields.map((f) => f.trim());
  const columns = names.map((n) =>
    (CSV_COLUMNS as readonly string[]).includes(n) ? (n as Column) : ALIASES[n],
  );
  const unknown = names.filter((_, k) => columns[k] === undefined);
  if (unknown.length > 0) {
    out.fatal =
      `unknown column${unknown.length > 1 ? "s" : ""} ${unknown.map((u) => `"${u}"`).join(", ")} ` +
      `in the header row: the columns are ${CSV_COLUMNS.join(", ")}`;
    return out;
  }
  for (const { line, fields } of rows) {
    if (fields.length !== names.length) {
      out.errors.push({
        row: line,
        id: fields[columns.indexOf("id")] ?? null,
        path: "",
        message: `${fields.length} fields where the header has ${names.length}`,
      });
      continue;
    }
    const value: Partial<Record<Column, string>> = {};
    columns.forEach((column, k) => {
      if (column) value[column] = fields[k] as string;
    });
    out.records.push(csvRecord(value));
    out.rows.push(line);
  }
  return out;
}

/**
 * A CSV row as the API's record: an integer amount becomes a number (anything else is sent as
 * it is, for the API to name), empty optional fields are left out.
 */
function csvRecord(v: Partial<Record<Column, string>>): Record<string, unknown> {
  const amount = v.amount ?? "";
  const record: Record<string, unknown> = {
    id: v.id ?? "",
    occurred_at: v.occurred_at ?? "",
    agent_id: v.agent_id ?? "",
    payee: { id: v.payee_id ?? "", ...(v.payee_name ? { name: v.payee_name } : {}) },
    amount: {
      amount: /^-?\d+$/.test(amount.trim()) ? Number(amount.trim()) : amount,
      currency: v.currency ?? "",
    },
  };
  if (v.kind) record.kind = v.kind;
  if (v.label || v.labeled_at) {
    record.label = {
      ...(v.label ? { label: v.label } : {}),
      ...(v.labeled_at ? { labeled_at: v.labeled_at } : {}),
    };
  }
  return record;
}

/** The API's limit of records per call. */
export const MAX_BATCH = 10_000;

/**
 * Records per call: 1,000 (a progress bar that moves) until that would take more than 30 calls,
 * the `expensive` rate limit's minute; then as many as keep it to 30, at most 10,000.
 */
export function batchSize(records: number): number {
  return Math.min(MAX_BATCH, Math.max(1_000, Math.ceil(records / 30)));
}

/** One fault the API named, as `{index, id, path, message}` (400 and 409 of the import). */
export interface RecordFault {
  index: number;
  id?: string | null;
  path?: string;
  message?: string;
}

export function isRecordFaults(details: unknown): details is RecordFault[] {
  return (
    Array.isArray(details) &&
    details.length > 0 &&
    details.every(
      (d) => typeof d === "object" && d !== null && Number.isInteger((d as RecordFault).index),
    )
  );
}

/**
 * The API's faults of one call (indices into `sent`, which holds the file's record positions)
 * as row errors: the path without its `records.<i>` prefix.
 */
export function rowErrors(
  faults: readonly RecordFault[],
  sent: readonly number[],
  rows: readonly number[],
): RowError[] {
  return faults.map((f) => ({
    row: rows[sent[f.index] as number] as number,
    id: f.id ?? null,
    path: (f.path ?? "").replace(/^records\.\d+\.?/, ""),
    message: f.message ?? "",
  }));
}
