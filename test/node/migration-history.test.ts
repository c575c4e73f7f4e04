/**
 * A database migrated by another history than drizzle/ holds (above all: one migrated before
 * the 27 pre-release migrations were squashed into drizzle/0000_baseline.sql) is refused
 * before anything is applied, with a message that says what to do, by the local SQL endpoint,
 * by `npm run dev` and by `npm run db:migrate`. Without the check, drizzle's migrator compares
 * timestamps only: it would apply the baseline over the old tables (`relation … already
 * exists`) or skip it.
 *
 * The PostgreSQL cases run when DATABASE_URL names a server (CI's second pass), each on a fresh
 * database dropped at the end.
 */
import { execFile, spawn } from "node:child_process";
import { once } from "node:events";
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { promisify } from "node:util";
import { PGlite } from "@electric-sql/pglite";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type AppliedMigration,
  historyMismatch,
  type JournalMigration,
  journalMigrations,
  MigrationHistoryError,
} from "../../scripts/migration-history";
import { createFreshDatabase, type FreshDatabase } from "../../scripts/sql-endpoint/fresh-database";
import { startSqlEndpoint } from "../../scripts/sql-endpoint/index";

const REPO = resolve(import.meta.dirname, "../..");
const MIGRATIONS = join(REPO, "drizzle");
const DATABASE_URL = process.env.DATABASE_URL;

/**
 * What the pre-squash chain recorded first: 0000_foundation.sql's SHA-256 and journal `when`.
 * Every database made before the squash starts with this row (and 26 more after it).
 */
const PRE_SQUASH_FIRST: AppliedMigration = {
  hash: "3d54f01288ef8bb4566a1f05df404ae778e3cb037a43fa25943a64003be633be",
  createdAt: 1795300411779,
};

/** drizzle's own bookkeeping, as its migrator creates it, holding the pre-squash first row. */
const PRE_SQUASH_HISTORY_SQL = `
  CREATE SCHEMA drizzle;
  CREATE TABLE drizzle.__drizzle_migrations (id serial PRIMARY KEY, hash text NOT NULL, created_at bigint);
  INSERT INTO drizzle.__drizzle_migrations (hash, created_at)
    VALUES ('${PRE_SQUASH_FIRST.hash}', ${PRE_SQUASH_FIRST.createdAt});`;

const scratch = mkdtempSync(join(tmpdir(), "migration-history-test-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

let template: string | undefined;

/** A closed PGlite data directory at `dir` holding the pre-squash history (made once, copied). */
async function prePglite(dir: string): Promise<void> {
  if (!template) {
    const made = join(scratch, "pre-squash-pglite");
    const db = await PGlite.create(made);
    await db.exec(PRE_SQUASH_HISTORY_SQL);
    await db.close();
    template = made;
  }
  mkdirSync(dirname(dir), { recursive: true });
  cpSync(template, dir, { recursive: true });
}

async function onServer<T>(url: string, run: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await run(client);
  } finally {
    await client.end();
  }
}

function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolvePort(port));
    });
  });
}

/** A developer's shell, not vitest's (as in dev.test.ts). */
function shellEnv(extra: Record<string, string | undefined>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const key of Object.keys(env)) {
    if (key.startsWith("VITEST") || key === "NODE_ENV") delete env[key];
  }
  delete env.DATABASE_URL;
  for (const [key, value] of Object.entries(extra)) {
    if (value === undefined) delete env[key];
    else env[key] = value;
  }
  return env;
}

describe("historyMismatch", () => {
  const journal: JournalMigration[] = [
    { tag: "0000_a", hash: "a".repeat(64), createdAt: 1_000 },
    { tag: "0001_b", hash: "b".repeat(64), createdAt: 2_000 },
  ];
  const applied = (...entries: JournalMigration[]): AppliedMigration[] =>
    entries.map(({ hash, createdAt }) => ({ hash, createdAt }));
  const [first, second] = journal as [JournalMigration, JournalMigration];

  it("accepts a new database and any prefix of the journal", () => {
    expect(historyMismatch([], journal)).toBeUndefined();
    expect(historyMismatch(applied(first), journal)).toBeUndefined();
    expect(historyMismatch(applied(first, second), journal)).toBeUndefined();
  });

  it("refuses a recorded migration the journal does not have, and names the squash", () => {
    expect(historyMismatch([PRE_SQUASH_FIRST], journal)).toEqual({
      reason:
        `its migration #1 (created_at ${PRE_SQUASH_FIRST.createdAt}, sha256 3d54f01288ef…) ` +
        "is not in drizzle/meta/_journal.json, whose #1 is 0000_a",
      unknownMigration: true,
    });
    const error = new MigrationHistoryError({ reason: "r", unknownMigration: true });
    expect(error.message).toContain("squashed into one baseline");
  });

  it("refuses a migration changed after it was applied, or applied out of order", () => {
    expect(historyMismatch([{ ...first, hash: "c".repeat(64) }], journal)).toEqual({
      reason: "drizzle/0000_a.sql was changed after this database applied it",
      unknownMigration: false,
    });
    expect(historyMismatch(applied(second), journal)).toEqual({
      reason: "its migration #1 is 0001_b, where drizzle/ has 0000_a",
      unknownMigration: false,
    });
  });

  it("refuses a database that has more migrations than drizzle/", () => {
    const extra = { hash: "d".repeat(64), createdAt: 3_000 };
    expect(historyMismatch([...applied(first, second), extra], journal)).toEqual({
      reason:
        "it recorded 3 migrations and drizzle/ has only 2: it was migrated by another (newer?) checkout",
      unknownMigration: false,
    });
  });

  it("refuses the history every pre-squash database starts with, against the real drizzle/", () => {
    const real = journalMigrations(MIGRATIONS);
    expect(real[0]?.tag).toBe("0000_baseline");
    expect(historyMismatch([], real)).toBeUndefined();
    expect(historyMismatch(applied(...real), real)).toBeUndefined();
    expect(historyMismatch([PRE_SQUASH_FIRST], real)?.unknownMigration).toBe(true);
  });
});

describe("the local SQL endpoint", () => {
  it("refuses a PGlite data directory migrated before the squash, and leaves it as it was", async () => {
    const dataDir = join(scratch, "endpoint-pglite");
    await prePglite(dataDir);
    await expect(startSqlEndpoint({ dataDir, migrationsFolder: MIGRATIONS })).rejects.toThrow(
      MigrationHistoryError,
    );
    // Closed (no stale lock) and untouched: nothing of the baseline was applied.
    expect(existsSync(join(dataDir, "postmaster.pid"))).toBe(false);
    const db = await PGlite.create(dataDir);
    try {
      const { rows } = await db.query<{ users: string | null; n: number }>(
        "select to_regclass('public.users')::text as users, count(*)::int as n from drizzle.__drizzle_migrations",
      );
      expect(rows).toEqual([{ users: null, n: 1 }]);
    } finally {
      await db.close();
    }
  }, 90_000);

  describe.runIf(DATABASE_URL)("on PostgreSQL", () => {
    let fresh: FreshDatabase;
    beforeAll(async () => {
      fresh = await createFreshDatabase(DATABASE_URL ?? "");
      await onServer(fresh.url, (client) => client.query(PRE_SQUASH_HISTORY_SQL));
    });
    afterAll(() => fresh?.drop());

    it("refuses a database used as is that was migrated before the squash", async () => {
      await expect(
        startSqlEndpoint({ databaseUrl: fresh.url, migrationsFolder: MIGRATIONS }),
      ).rejects.toThrow(/is not in drizzle\/meta\/_journal\.json/);
      const { rows } = await onServer(fresh.url, (client) =>
        client.query("select to_regclass('public.users')::text as users"),
      );
      expect(rows).toEqual([{ users: null }]);
    });
  });
});

describe("npm run dev", () => {
  let fresh: FreshDatabase | undefined;
  beforeAll(async () => {
    if (DATABASE_URL) {
      fresh = await createFreshDatabase(DATABASE_URL);
      await onServer(fresh.url, (client) => client.query(PRE_SQUASH_HISTORY_SQL));
    }
  });
  afterAll(() => fresh?.drop());

  it("stops before wrangler with the exact way out when the database predates the squash", async () => {
    const stateDir = join(scratch, "dev-state");
    if (!fresh) await prePglite(join(stateDir, ".data", "pglite"));
    const child = spawn("npm", ["run", "dev"], {
      cwd: REPO,
      env: shellEnv({
        DEV_STATE_DIR: stateDir,
        PORT: String(await freePort()),
        DATABASE_URL: fresh?.url,
      }),
      // Its own group: should it start after all, SIGTERM reaches dev.ts, which stops wrangler.
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.stderr.on("data", (chunk: Buffer) => {
      output += chunk.toString();
    });
    const exited = once(child, "exit");
    const result = await Promise.race([exited, sleep(60_000, "timeout" as const)]);
    if (result === "timeout") {
      if (child.pid) process.kill(-child.pid, "SIGTERM");
      await Promise.race([exited, sleep(15_000)]);
      throw new Error(`npm run dev did not stop on its own:\n${output}`);
    }
    expect(child.exitCode, output).toBe(1);
    expect(output).toContain(
      fresh ? "cannot start: the PostgreSQL database" : `the local database in ${stateDir}`,
    );
    expect(output).toContain("squashed into one baseline");
    expect(output).toContain(`rm -rf ${join(stateDir, ".data")}`);
    if (fresh) expect(output).toContain("drop and recreate that database");
    expect(output).not.toContain("starting wrangler");
    expect(output).not.toMatch(/already exists|Failed query/);
    // Its lock is released: the next `npm run dev` (after the rm) is not blocked by this one.
    expect(existsSync(join(stateDir, ".data", "dev.pid"))).toBe(false);
  }, 90_000);
});

describe.runIf(DATABASE_URL)("npm run db:migrate", () => {
  const databases: FreshDatabase[] = [];
  afterAll(async () => {
    for (const database of databases) await database.drop();
  });

  async function migrate(url: string): Promise<{ code: number; output: string }> {
    try {
      const { stdout, stderr } = await promisify(execFile)("npm", ["run", "-s", "db:migrate"], {
        cwd: REPO,
        env: shellEnv({ DATABASE_OWNER_URL: url }),
      });
      return { code: 0, output: stdout + stderr };
    } catch (error) {
      const failed = error as { code?: number; stdout?: string; stderr?: string };
      return { code: failed.code ?? -1, output: `${failed.stdout}${failed.stderr}` };
    }
  }

  it("migrates a new database once, then finds nothing to do", async () => {
    const database = await createFreshDatabase(DATABASE_URL ?? "");
    databases.push(database);
    for (const run of [1, 2]) {
      const { code, output } = await migrate(database.url);
      expect(code, `run ${run}: ${output}`).toBe(0);
      expect(output).toContain("migrations applied");
    }
    const { rows } = await onServer(database.url, (client) =>
      client.query("select count(*)::int as n from drizzle.__drizzle_migrations"),
    );
    expect(rows).toEqual([{ n: journalMigrations(MIGRATIONS).length }]);
  }, 60_000);

  it("refuses a database migrated before the squash, applying nothing", async () => {
    const database = await createFreshDatabase(DATABASE_URL ?? "");
    databases.push(database);
    await onServer(database.url, (client) => client.query(PRE_SQUASH_HISTORY_SQL));
    const { code, output } = await migrate(database.url);
    expect(code, output).toBe(1);
    expect(output).toContain("Refusing to migrate");
    expect(output).toContain("nothing was applied");
    expect(output).toContain("squashed into one baseline");
    const { rows } = await onServer(database.url, (client) =>
      client.query("select to_regclass('public.users')::text as users"),
    );
    expect(rows).toEqual([{ users: null }]);
  }, 60_000);
});
