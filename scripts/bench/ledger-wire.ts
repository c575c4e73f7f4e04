/**
 * Classifies every request the local SQL endpoint receives, without a proxy hop: Node's
 * `http.server.request.start` diagnostics channel hands over each incoming request before the
 * endpoint's handler runs, and a second 'data' listener sees the same body. This is what shows
 * that a flushed group-commit batch is exactly one round trip (no request without ledger rows),
 * how many rows each carried, and which requests were checkpoint writes of the anchoring alarm.
 */
import { subscribe, unsubscribe } from "node:diagnostics_channel";
import type { IncomingMessage } from "node:http";

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

interface Statement {
  query?: unknown;
  params?: unknown;
}

const CHANNEL = "http.server.request.start";

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

/** Rows of a multi-row `insert ... values (...), (...)` as drizzle renders it. */
function insertedRows(query: string): number {
  const values = query.slice(query.toLowerCase().indexOf(" values "));
  return (values.match(/\)\s*,\s*\(/g)?.length ?? 0) + 1;
}

function statementsOf(body: string): Statement[] {
  const parsed = JSON.parse(body) as { queries?: Statement[] } & Statement;
  return Array.isArray(parsed.queries) ? parsed.queries : [parsed];
}

export class WireWatch {
  #orgs = new Set<string>();
  #counts = emptyCounts();
  readonly #listener = (message: unknown) => this.#onRequest(message);

  constructor(private readonly port: number) {
    subscribe(CHANNEL, this.#listener);
  }

  /** Starts counting afresh, for requests that carry one of these orgs' tenant setting. */
  watch(orgIds: readonly string[]): void {
    this.#orgs = new Set(orgIds);
    this.#counts = emptyCounts();
  }

  counts(): WireCounts {
    return { ...this.#counts };
  }

  close(): void {
    unsubscribe(CHANNEL, this.#listener);
  }

  #onRequest(message: unknown): void {
    const request = (message as { request?: IncomingMessage }).request;
    if (request?.method !== "POST" || request.socket.localPort !== this.port) return;
    if (!request.url?.startsWith("/sql")) return;
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => this.#classify(Buffer.concat(chunks).toString("utf8")));
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
      if (text.includes("set_config('app.org_id'") && Array.isArray(params)) {
        orgId = String(params[0]);
      } else if (text.startsWith('insert into "audit_entries"')) {
        rows += insertedRows(query);
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
