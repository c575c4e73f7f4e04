import { NeonDbError, neon, neonConfig } from "@neondatabase/serverless";
import { drizzle, type NeonHttpDatabase } from "drizzle-orm/neon-http";
import { type Env, modeOf } from "../env";
import { ApiError } from "../errors";
import * as schema from "./schema";

export type Database = NeonHttpDatabase<typeof schema>;

// One client per connection string per isolate: neon() and drizzle() hold no connection, only
// configuration, so this is a cache of parsed config, safe to share between requests.
const clients = new Map<string, Database>();

/**
 * The database as the application role. Production reaches Neon; local development and tests
 * point the same driver at the local SQL-over-HTTP endpoint, which is the only difference.
 */
export function database(env: Env): Database {
  const url = env.DATABASE_URL;
  if (!url) throw new ApiError("database_unavailable");
  if (env.LOCAL_SQL_ENDPOINT === "true" && modeOf(env) !== "production") {
    // The connection string's own host and port name the local endpoint, so every client
    // carries its destination and nothing global changes between requests.
    neonConfig.fetchEndpoint = (host, port) => `http://${host}:${port}/sql`;
  }
  let db = clients.get(url);
  if (!db) {
    db = drizzle(neon(url), { schema });
    clients.set(url, db);
  }
  return db;
}

// SQLSTATE classes that mean "the database could not serve this now", not "the query is wrong":
// 08 connection exception, 53 insufficient resources, 57 operator intervention.
const UNAVAILABLE_CLASSES = ["08", "53", "57"];

/** Whether an error from the driver means the database is unreachable or overloaded (503). */
export function isDatabaseUnavailable(error: unknown): boolean {
  const cause = error instanceof Error && error.cause instanceof NeonDbError ? error.cause : error;
  if (!(cause instanceof NeonDbError)) return false;
  if (!cause.code) return true; // network failure or a non-400 answer from the HTTP endpoint
  return UNAVAILABLE_CLASSES.includes(cause.code.slice(0, 2));
}

/** The SQLSTATE of a database error, looking through drizzle's wrapper. */
export function sqlState(error: unknown): string | undefined {
  const cause = error instanceof Error && error.cause instanceof NeonDbError ? error.cause : error;
  return cause instanceof NeonDbError ? cause.code : undefined;
}
