/**
 * What the local SQL endpoint receives, read without a proxy hop: Node's
 * `http.server.request.start` diagnostics channel hands over each incoming request before the
 * endpoint's handler runs, and a second 'data' listener sees the same body. The ledger's and the
 * assess pipeline's benchmarks classify these bodies (ledger-wire.ts, assess-wire.ts).
 */
import { subscribe, unsubscribe } from "node:diagnostics_channel";
import type { IncomingMessage } from "node:http";

const CHANNEL = "http.server.request.start";

/** One statement of a request body, as the Neon driver sends it. */
export interface Statement {
  query?: unknown;
  params?: unknown;
}

/**
 * Calls `onBody` with the body of every `POST /sql` the endpoint listening on `port` receives;
 * answers the function that stops it.
 */
export function tapSqlRequests(port: number, onBody: (body: string) => void): () => void {
  const listener = (message: unknown) => {
    const request = (message as { request?: IncomingMessage }).request;
    if (request?.method !== "POST" || request.socket.localPort !== port) return;
    if (!request.url?.startsWith("/sql")) return;
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => onBody(Buffer.concat(chunks).toString("utf8")));
  };
  subscribe(CHANNEL, listener);
  return () => unsubscribe(CHANNEL, listener);
}

/** The statements of a request body: one, or a transaction's `queries`. Throws if unparsable. */
export function statementsOf(body: string): Statement[] {
  const parsed = JSON.parse(body) as { queries?: Statement[] } & Statement;
  return Array.isArray(parsed.queries) ? parsed.queries : [parsed];
}

/**
 * Rows a statement inserts: a multi-row `insert ... values (...), (...)` as drizzle renders it,
 * or rows sent as one JSON array parameter to `json_populate_recordset` (the ledger's entries).
 */
export function insertedRows(query: string, params: unknown = []): number {
  if (/json_populate_recordset/i.test(query) && Array.isArray(params)) {
    const rows = params.find((p): p is string => typeof p === "string" && p.startsWith("["));
    if (rows !== undefined) return (JSON.parse(rows) as unknown[]).length;
  }
  const values = query.slice(query.toLowerCase().indexOf(" values "));
  return (values.match(/\)\s*,\s*\(/g)?.length ?? 0) + 1;
}
