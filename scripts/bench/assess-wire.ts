/**
 * Sorts every request the SQL endpoint receives into what sent it, by its statements (read
 * from Node's `http.server.request.start` diagnostics channel, as ledger-wire.ts does):
 *
 * - `persist`: the assess pipeline's write transaction (it inserts into `assessments`);
 * - `flush`: the ledger Durable Object writing entries (its alarm re-sends, idempotently,
 *   the entries the pipeline already wrote), with or without checkpoints;
 * - `checkpoint`: the ledger Durable Object writing checkpoints only;
 * - `read`: everything else (the assess pipeline's context read, which also authenticates).
 */
import { subscribe, unsubscribe } from "node:diagnostics_channel";
import type { IncomingMessage } from "node:http";

export interface Traffic {
  read: number;
  persist: number;
  flush: number;
  checkpoint: number;
  /** Entry rows the DO's flushes carried. */
  flushedRows: number;
}

const CHANNEL = "http.server.request.start";

const none = (): Traffic => ({ read: 0, persist: 0, flush: 0, checkpoint: 0, flushedRows: 0 });

/** Rows of a multi-row `insert ... values (...), (...)` as drizzle renders it. */
function insertedRows(query: string): number {
  const values = query.slice(query.toLowerCase().indexOf(" values "));
  return (values.match(/\)\s*,\s*\(/g)?.length ?? 0) + 1;
}

export class TrafficWatch {
  #counts = none();
  readonly #listener = (message: unknown) => this.#onRequest(message);

  constructor(private readonly port: number) {
    subscribe(CHANNEL, this.#listener);
  }

  /** The counts since the last call. */
  take(): Traffic {
    const counts = this.#counts;
    this.#counts = none();
    return counts;
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
    let queries: string[] = [];
    try {
      const parsed = JSON.parse(body) as { queries?: { query?: unknown }[]; query?: unknown };
      const statements = Array.isArray(parsed.queries) ? parsed.queries : [parsed];
      queries = statements.map((s) => (typeof s.query === "string" ? s.query : ""));
    } catch {
      // unparsable: the endpoint answers it with an error; counted as a read
    }
    // Anywhere in the statement: the pipeline inserts its assessment inside a CTE.
    const inserts = (table: string) =>
      queries.filter((q) => new RegExp(`\\binsert\\s+into\\s+"?${table}"?[\\s(]`, "i").test(q));
    const entries = inserts("audit_entries");
    if (inserts("assessments").length > 0) this.#counts.persist += 1;
    else if (entries.length > 0) {
      this.#counts.flush += 1;
      this.#counts.flushedRows += entries.reduce((sum, q) => sum + insertedRows(q), 0);
    } else if (inserts("audit_checkpoints").length > 0) this.#counts.checkpoint += 1;
    else this.#counts.read += 1;
  }
}
