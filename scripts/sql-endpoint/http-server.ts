import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { type Backend, BackendUnavailableError } from "./backend";
import { type DelaySampler, sleep } from "./delay";
import {
  isPostgresError,
  ProtocolError,
  parseSqlRequest,
  postgresErrorBody,
  resultBody,
} from "./protocol";
import { emptyStats, type SqlEndpointStats } from "./stats";

// Far above anything the Worker sends; only there so a runaway client cannot exhaust memory.
const MAX_BODY_BYTES = 64 * 1024 * 1024;
// Keep-alive sockets from fetch() would otherwise hold close() open indefinitely.
const CLOSE_GRACE_MS = 2000;

class PayloadTooLargeError extends Error {}

interface Answer {
  status: number;
  body: object | string;
}

export interface HttpServer {
  port: number;
  stats: SqlEndpointStats;
  close(): Promise<void>;
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) chunks.push(chunk);
    });
    request.on("end", () => {
      if (size > MAX_BODY_BYTES) reject(new PayloadTooLargeError("request body too large"));
      else resolve(Buffer.concat(chunks).toString("utf8"));
    });
    request.on("error", reject);
  });
}

/** Sends an answer; the bytes of its body. */
function send(response: ServerResponse, { status, body }: Answer): number {
  const json = typeof body !== "string";
  const payload = json ? JSON.stringify(body) : body;
  const bytes = Buffer.byteLength(payload);
  response.writeHead(status, {
    "content-type": json ? "application/json" : "text/plain; charset=utf-8",
    "content-length": bytes,
  });
  response.end(payload);
  return bytes;
}

function errorAnswer(error: unknown, log: (line: string) => void): Answer {
  if (isPostgresError(error)) return { status: 400, body: postgresErrorBody(error) };
  if (error instanceof ProtocolError) return { status: 400, body: { message: error.message } };
  if (error instanceof PayloadTooLargeError) return { status: 413, body: error.message };
  if (error instanceof BackendUnavailableError) {
    return { status: 503, body: `database unavailable: ${error.message}` };
  }
  log(`sql-endpoint: internal error: ${error instanceof Error ? error.stack : String(error)}`);
  return { status: 500, body: `internal error: ${String(error)}` };
}

async function answerSql(
  request: IncomingMessage,
  backend: Backend,
  stats: SqlEndpointStats,
  log: (line: string) => void,
  delay: DelaySampler | undefined,
): Promise<Answer> {
  stats.requests += 1;
  // The body is read before any wait: a listener added after an await could miss chunks that
  // another reader (the benchmarks' tap) already set flowing.
  let body: string;
  try {
    body = await readBody(request);
  } catch (error) {
    stats.errors += 1;
    return errorAnswer(error, log);
  }
  stats.bytesIn += Buffer.byteLength(body);
  const rtt = delay?.() ?? 0;
  // Half on the way there, half on the way back (delay.ts): locks are held only in between.
  await sleep(rtt / 2);
  try {
    return await runSql(request, body, backend, stats, log);
  } finally {
    await sleep(rtt / 2);
  }
}

async function runSql(
  request: IncomingMessage,
  body: string,
  backend: Backend,
  stats: SqlEndpointStats,
  log: (line: string) => void,
): Promise<Answer> {
  try {
    const sqlRequest = parseSqlRequest(request.headers, body);
    if (sqlRequest.batch) stats.batches += 1;
    const results = await backend.run(sqlRequest, () => {
      stats.statements += 1;
    });
    return { status: 200, body: resultBody(sqlRequest, results) };
  } catch (error) {
    stats.errors += 1;
    return errorAnswer(error, log);
  }
}

async function route(
  request: IncomingMessage,
  backend: Backend,
  stats: SqlEndpointStats,
  log: (line: string) => void,
  delay: DelaySampler | undefined,
): Promise<Answer> {
  const path = new URL(request.url ?? "/", "http://localhost").pathname;
  const route = `${request.method ?? "GET"} ${path}`;
  switch (route) {
    case "POST /sql":
      return answerSql(request, backend, stats, log, delay);
    case "GET /stats":
      return { status: 200, body: { ...stats } };
    case "POST /stats/reset":
      Object.assign(stats, emptyStats());
      return { status: 200, body: { ...stats } };
    case "GET /health":
      return { status: 200, body: { ok: true, backend: backend.name } };
    default:
      return { status: 404, body: { message: `no route for ${route}` } };
  }
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve, reject) => {
    server.close((error) => (error ? reject(error) : resolve()));
    server.closeIdleConnections();
    setTimeout(() => server.closeAllConnections(), CLOSE_GRACE_MS).unref();
  });
}

export interface HttpServerOptions {
  host: string;
  port: number;
  log: (line: string) => void;
  /** The injected round trip of each `POST /sql` (`--db-rtt`); none when absent. */
  delay?: DelaySampler;
}

export async function startHttpServer(
  backend: Backend,
  { host, port, log, delay }: HttpServerOptions,
): Promise<HttpServer> {
  const stats = emptyStats();
  const server = createServer((request, response) => {
    const sql = request.method === "POST" && request.url?.split("?")[0] === "/sql";
    route(request, backend, stats, log, delay)
      .catch((error: unknown) => errorAnswer(error, log))
      .then((answer) => {
        const bytes = send(response, answer);
        if (sql) stats.bytesOut += bytes;
      });
  });
  // Longer than the clients' idle keep-alive: with Node's 5 s default the server may close a
  // socket just as workerd reuses it ("Network connection lost"), which an injected round trip
  // on a loaded machine made frequent enough to fail a benchmark run.
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  return { port: address.port, stats, close: () => closeServer(server) };
}
