/**
 * `npm run bench:ledger -- --null-db`: the SQL endpoint's HTTP server in front of a backend
 * that stores nothing and answers at once, so a run measures the Worker and the Durable Object
 * alone (the ceiling the database cannot raise). Answers only what OrgLedger's writes need:
 * `set_config` returns its value, every other statement reports one row written.
 */
import type { Backend, FieldDescription, StatementResult } from "../sql-endpoint/backend.ts";
import { startHttpServer } from "../sql-endpoint/http-server.ts";
import type { SqlEndpoint } from "../sql-endpoint/index.ts";

const TEXT_FIELD: FieldDescription = {
  name: "set_config",
  tableID: 0,
  columnID: 0,
  dataTypeID: 25,
  dataTypeSize: -1,
  dataTypeModifier: -1,
  format: "text",
};

const nullBackend: Backend = {
  // The endpoint only distinguishes the two real backends; this one is neither, and says so
  // through the benchmark's own output.
  name: "pglite",
  async run(request, onStatement) {
    return request.statements.map(({ query, params }): StatementResult => {
      onStatement();
      return query.includes("set_config")
        ? { command: "SELECT", rowCount: 1, rows: [[params[0] ?? null]], fields: [TEXT_FIELD] }
        : { command: "INSERT", rowCount: 1, rows: [], fields: [] };
    });
  },
  async close() {},
};

export async function startNullSqlEndpoint(): Promise<SqlEndpoint> {
  const host = "127.0.0.1";
  const server = await startHttpServer(nullBackend, { host, port: 0, log: () => undefined });
  return {
    url: `http://${host}:${server.port}/sql`,
    port: server.port,
    backend: nullBackend.name,
    stats: () => ({ ...server.stats }),
    close: () => server.close(),
  };
}
