/**
 * Applies drizzle/ to a PostgreSQL database as its owner, in one transaction, with the
 * node-postgres migrator (never through neon-http, which is not transactional).
 *
 *   DATABASE_OWNER_URL='postgresql://owner:…@ep-….neon.tech/neondb?sslmode=require' npm run db:migrate
 */
import { resolve } from "node:path";
import { drizzle } from "drizzle-orm/node-postgres";
import { migrate } from "drizzle-orm/node-postgres/migrator";
import pg from "pg";

const url = process.env.DATABASE_OWNER_URL;
if (!url) {
  console.error("Set DATABASE_OWNER_URL to the owner's connection string (not the app role's).");
  process.exit(2);
}

const pool = new pg.Pool({ connectionString: url, max: 1 });
try {
  await migrate(drizzle(pool), { migrationsFolder: resolve(import.meta.dirname, "../drizzle") });
  console.log("migrations applied");
} finally {
  await pool.end();
}
