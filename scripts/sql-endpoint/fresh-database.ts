import { randomBytes } from "node:crypto";
import pg from "pg";
import { quoteIdentifier } from "./transaction";

export interface FreshDatabase {
  /** The server URL with its database replaced by the fresh one. */
  url: string;
  name: string;
  drop(): Promise<void>;
}

async function asAdmin(serverUrl: string, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/** A throwaway database on the server behind `serverUrl`, so parallel runs never share data. */
export async function createFreshDatabase(serverUrl: string): Promise<FreshDatabase> {
  // The app's role is cluster-wide: migration 0000 makes it when missing, a check-then-create
  // that two runs migrating at once (CI's PostgreSQL shards) would race. Made here first, a
  // twin's concurrent CREATE ROLE is the error that is caught.
  await asAdmin(
    serverUrl,
    `DO $$ BEGIN
       IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'app_user') THEN
         CREATE ROLE app_user NOLOGIN NOBYPASSRLS;
       END IF;
     EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL;
     END $$`,
  );
  const name = `agent_risk_test_${randomBytes(6).toString("hex")}`;
  await asAdmin(serverUrl, `CREATE DATABASE ${quoteIdentifier(name)}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    name,
    // FORCE: a pooled connection that was not given back yet must not keep the database alive.
    drop: () => asAdmin(serverUrl, `DROP DATABASE IF EXISTS ${quoteIdentifier(name)} WITH (FORCE)`),
  };
}
