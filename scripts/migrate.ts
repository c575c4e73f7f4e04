/**
 * Applies drizzle/ to a PostgreSQL database as its owner, in one transaction, with the
 * node-postgres migrator (never through neon-http, which is not transactional).
 *
 *   DATABASE_OWNER_URL='postgresql://owner:…@ep-….neon.tech/neondb?sslmode=require' npm run db:migrate
 *
 * A database whose recorded migrations are not the first entries of drizzle/'s journal (one
 * migrated before the migrations were squashed into a baseline, or by another branch) is
 * refused before anything is applied: drizzle's migrator compares timestamps only, and would
 * fail with an obscure `relation "…" already exists`, or skip what it should apply.
 */
import { resolve } from "node:path";
import { drizzle } from "drizzle-orm/node-postgres";
import { migrate } from "drizzle-orm/node-postgres/migrator";
import pg from "pg";
import { redactDatabaseUrl } from "./database-url.ts";
import { assertMigrationHistory, MigrationHistoryError } from "./migration-history.ts";

const url = process.env.DATABASE_OWNER_URL;
if (!url) {
  console.error("Set DATABASE_OWNER_URL to the owner's connection string (not the app role's).");
  process.exit(2);
}

const migrationsFolder = resolve(import.meta.dirname, "../drizzle");
const pool = new pg.Pool({ connectionString: url, max: 1 });
try {
  await assertMigrationHistory(
    async (sql) => (await pool.query<Record<string, unknown>>(sql)).rows,
    migrationsFolder,
  );
  await migrate(drizzle(pool), { migrationsFolder });
  console.log("migrations applied");
} catch (error) {
  if (!(error instanceof MigrationHistoryError)) throw error;
  console.error(
    [
      `Refusing to migrate ${redactDatabaseUrl(url)}: nothing was applied.`,
      `${error.message[0]?.toUpperCase()}${error.message.slice(1)}`,
      error.unknownMigration
        ? "Migrate a new, empty database instead (see docs/deploy.md)."
        : "Migrate it from the checkout that made its history, or migrate a new, empty database.",
    ].join("\n"),
  );
  process.exitCode = 1;
} finally {
  await pool.end();
}
