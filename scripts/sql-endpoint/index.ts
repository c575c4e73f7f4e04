/**
 * A local Neon-compatible SQL-over-HTTP endpoint: point `neonConfig.fetchEndpoint` at `url`
 * and `neon()` runs its production code path against PGlite or a local PostgreSQL server.
 */
import type { Backend, BackendName } from "./backend";
import { type DelaySampler, parseDbRtt } from "./delay";
import { startHttpServer } from "./http-server";
import { openPgliteBackend } from "./pglite-backend";
import { openPostgresBackend } from "./postgres-backend";
import type { SqlEndpointStats } from "./stats";

export type { SqlEndpointStats } from "./stats";

export interface SqlEndpointOptions {
  /** PostgreSQL server URL; absent → PGlite. */
  databaseUrl?: string;
  /** PGlite data directory; absent → in-memory. */
  dataDir?: string;
  /** PostgreSQL only: create a fresh database and drop it on close. */
  fresh?: boolean;
  /** 0 or absent → a free port. */
  port?: number;
  /** Default "127.0.0.1". */
  host?: string;
  /**
   * Drizzle migrations folder, applied at start with the owner's connection. An existing
   * database whose recorded migrations are not the journal's first entries (one migrated before
   * the squash into a baseline) is refused with a MigrationHistoryError, before anything is
   * applied.
   */
  migrationsFolder: string;
  log?: (line: string) => void;
  /**
   * An injected round trip per SQL request (`--db-rtt`, scripts/sql-endpoint/delay.ts): a
   * spec such as `20`, `20±5` or `uniform:10-30`, or a sampler; none when absent.
   */
  dbRtt?: string | DelaySampler;
}

export interface SqlEndpoint {
  /** What `neonConfig.fetchEndpoint` gets, e.g. "http://127.0.0.1:4444/sql". */
  url: string;
  port: number;
  backend: BackendName;
  stats(): SqlEndpointStats;
  /** Stops the HTTP server, closes the pool or PGlite, drops a fresh database. */
  close(): Promise<void>;
}

function openBackend(options: SqlEndpointOptions, log: (line: string) => void): Promise<Backend> {
  const { databaseUrl, migrationsFolder } = options;
  if (databaseUrl) {
    return openPostgresBackend({
      databaseUrl,
      fresh: options.fresh ?? false,
      migrationsFolder,
      log,
    });
  }
  return openPgliteBackend({ dataDir: options.dataDir, migrationsFolder, log });
}

function urlHost(host: string): string {
  return host.includes(":") ? `[${host}]` : host;
}

export async function startSqlEndpoint(options: SqlEndpointOptions): Promise<SqlEndpoint> {
  const log = options.log ?? (() => undefined);
  const host = options.host ?? "127.0.0.1";
  // Parsed before anything opens: a bad spec fails with nothing to clean up.
  const delay = typeof options.dbRtt === "string" ? parseDbRtt(options.dbRtt) : options.dbRtt;
  const backend = await openBackend(options, log);
  let server: Awaited<ReturnType<typeof startHttpServer>>;
  try {
    server = await startHttpServer(backend, { host, port: options.port ?? 0, log, delay });
  } catch (error) {
    await backend.close();
    throw error;
  }
  const url = `http://${urlHost(host)}:${server.port}/sql`;
  log(`sql-endpoint: listening on ${url} (${backend.name})`);
  let closing: Promise<void> | undefined;
  return {
    url,
    port: server.port,
    backend: backend.name,
    stats: () => ({ ...server.stats }),
    close: () => {
      closing ??= server.close().finally(() => backend.close());
      return closing;
    },
  };
}
