/**
 * Classifies every request the local SQL endpoint receives (through sql-tap.ts, no proxy hop).
 * This is what shows that a flushed group-commit batch is exactly one round trip (no request
 * without ledger rows), how many rows each carried, and which requests were checkpoint writes
 * of the anchoring alarm.
 */
import { insertedRows, type Statement, statementsOf, tapSqlRequests } from "./sql-tap.ts";

export interface WireCounts {
  /** POST /sql requests for the watched orgs. */
  requests: number;
  /** Requests inserting audit_entries rows (= flushed group-commit batches). */
  entryWrites: number;
  entryRows: number;
  maxRows: number;
  /** Requests inserting audit_checkpoints rows (alone or riding along with entries). */
  checkpointWrites: number;
  /** Requests inserting checkpoints and no entries. */
  checkpointOnly: number;
  /** Requests for the watched orgs that inserted nothing into the ledger: should be 0. */
  other: number;
  /** Requests for no watched org (e.g. another run's alarm, or unparsable bodies). */
  foreign: number;
}

function emptyCounts(): WireCounts {
  return {
    requests: 0,
    entryWrites: 0,
    entryRows: 0,
    maxRows: 0,
    checkpointWrites: 0,
    checkpointOnly: 0,
    other: 0,
    foreign: 0,
  };
}

export class WireWatch {
  #orgs = new Set<string>();
  #counts = emptyCounts();
  readonly close: () => void;

  constructor(port: number) {
    this.close = tapSqlRequests(port, (body) => this.#classify(body));
  }

  /** Starts counting afresh, for requests that carry one of these orgs' tenant setting. */
  watch(orgIds: readonly string[]): void {
    this.#orgs = new Set(orgIds);
    this.#counts = emptyCounts();
  }

  counts(): WireCounts {
    return { ...this.#counts };
  }

  #classify(body: string): void {
    const counts = this.#counts;
    let statements: Statement[];
    try {
      statements = statementsOf(body);
    } catch {
      counts.foreign += 1;
      return;
    }
    let orgId: string | undefined;
    let rows = 0;
    let checkpoints = 0;
    for (const { query, params } of statements) {
      if (typeof query !== "string") continue;
      const text = query.trimStart().toLowerCase();
      const setting = orgSetting(text, params);
      if (setting !== undefined) {
        orgId = setting;
      } else if (/\binsert\s+into\s+"?audit_entries"?[\s(]/.test(text)) {
        // Also inside a CTE: the ledger inserts its entries and reads back the skipped ones.
        rows += insertedRows(query, params);
      } else if (text.startsWith('insert into "audit_checkpoints"')) {
        checkpoints += insertedRows(query);
      }
    }
    if (orgId === undefined || !this.#orgs.has(orgId)) {
      counts.foreign += 1;
      return;
    }
    counts.requests += 1;
    if (rows > 0) {
      counts.entryWrites += 1;
      counts.entryRows += rows;
      counts.maxRows = Math.max(counts.maxRows, rows);
    }
    if (checkpoints > 0) counts.checkpointWrites += 1;
    if (checkpoints > 0 && rows === 0) counts.checkpointOnly += 1;
    if (checkpoints === 0 && rows === 0) counts.other += 1;
  }
}

/**
 * The org a statement sets `app.org_id` to, if it does: the setting's name written in the text
 * (`set_config('app.org_id', $1, true)`) or, as the Worker renders it once for every setting,
 * passed as the first value (`set_config($1,$2,true)`).
 */
export function orgSetting(text: string, params: unknown): string | undefined {
  if (!Array.isArray(params)) return undefined;
  if (text.includes("set_config('app.org_id'")) return String(params[0]);
  if (/set_config\(\s*\$1\s*,\s*\$2\s*,/.test(text) && params[0] === "app.org_id") {
    return String(params[1]);
  }
  return undefined;
}
