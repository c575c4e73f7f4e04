/**
 * `npm run network:exclude` (scripts/network-exclude.ts; docs/network.md, "Poisoning"): an
 * operator excludes an org's mode from the network and lifts it, on a migrated database: PGlite
 * in memory, and, when DATABASE_URL names a PostgreSQL server (CI's second pass), the command
 * itself end to end on a fresh database there.
 */
import { execFile } from "node:child_process";
import { randomUUID } from "node:crypto";
import { resolve } from "node:path";
import { promisify } from "node:util";
import { PGlite } from "@electric-sql/pglite";
import { drizzle as pgDrizzle } from "drizzle-orm/node-postgres";
import { migrate as pgMigrate } from "drizzle-orm/node-postgres/migrator";
import { drizzle as pgliteDrizzle } from "drizzle-orm/pglite";
import { migrate as pgliteMigrate } from "drizzle-orm/pglite/migrator";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  applyExclusion,
  describe as describeState,
  parseExclusion,
  type Query,
  USAGE,
  UsageError,
} from "../../scripts/network-exclude";
import { createFreshDatabase, type FreshDatabase } from "../../scripts/sql-endpoint/fresh-database";

const REPO = resolve(import.meta.dirname, "../..");
const MIGRATIONS = resolve(REPO, "drizzle");
const DATABASE_URL = process.env.DATABASE_URL;

/** An organization (and its founder), as POST /v1/orgs leaves them. */
async function newOrg(query: Query): Promise<string> {
  const user = randomUUID();
  const org = randomUUID();
  await query("insert into users (id, idp_subject) values ($1, $2)", [user, `sub-${user}`]);
  await query("insert into organizations (id, name, founder_user_id) values ($1, 'Rival', $2)", [
    org,
    user,
  ]);
  return org;
}

async function member(query: Query, org: string) {
  const rows = await query(
    `select livemode, contribute, consume, excluded_at is not null as excluded, excluded_reason
     from network_members where org_id = $1 order by livemode`,
    [org],
  );
  return rows;
}

describe("the exclusion's arguments", () => {
  it("reads an exclusion and a lift, and refuses what is incomplete", () => {
    const org = randomUUID();
    expect(parseExclusion(["--org", org, "--mode", "live", "--reason", " poisoning "])).toEqual({
      org,
      livemode: true,
      reason: "poisoning",
      undo: false,
    });
    expect(parseExclusion(["--undo", "--mode", "test", "--org", org])).toEqual({
      org,
      livemode: false,
      reason: null,
      undo: true,
    });
    for (const [argv, message] of [
      [["--mode", "live", "--reason", "x"], "--org must be an org's uuid"],
      [["--org", "acme", "--mode", "live", "--reason", "x"], "--org must be an org's uuid"],
      [["--org", org, "--mode", "prod", "--reason", "x"], "--mode must be live or test"],
      [["--org", org, "--mode", "live"], "--reason is required to exclude"],
      [["--org", org, "--mode", "live", "--reason", "  "], "--reason is required to exclude"],
      [["--org", org, "--mode", "live", "--undo", "--reason", "x"], "--undo takes no --reason"],
      [["--org", org, "--mode", "live", "--reason"], "--reason needs a value"],
      [["--org", org, "--mode", "live", "--force"], 'unknown argument "--force"'],
    ] as const) {
      expect(() => parseExclusion(argv)).toThrow(new UsageError(message));
    }
  });
});

describe("excluding on a migrated database (PGlite)", () => {
  let db: PGlite;
  let query: Query;

  beforeAll(async () => {
    db = await PGlite.create();
    await pgliteMigrate(pgliteDrizzle(db), { migrationsFolder: MIGRATIONS });
    query = async (text, params) => (await db.query<Record<string, unknown>>(text, params)).rows;
  }, 60_000);
  afterAll(() => db?.close());

  it("excludes a member's mode, keeps its settings and its other mode, and lifts it", async () => {
    const org = await newOrg(query);
    for (const livemode of [true, false]) {
      await query(
        "insert into network_members (org_id, livemode, contribute, consume) values ($1, $2, true, true)",
        [org, livemode],
      );
    }
    const exclusion = parseExclusion(["--org", org, "--mode", "live", "--reason", "poisoning"]);
    const state = await applyExclusion(query, exclusion);
    expect(describeState(exclusion, state)).toMatch(
      new RegExp(
        `^org ${org} \\(live\\) excluded since \\S+: poisoning \\(contribute true, consume true\\)$`,
      ),
    );
    expect(await member(query, org)).toEqual([
      { livemode: false, contribute: true, consume: true, excluded: false, excluded_reason: null },
      {
        livemode: true,
        contribute: true,
        consume: true,
        excluded: true,
        excluded_reason: "poisoning",
      },
    ]);

    const lift = parseExclusion(["--org", org, "--mode", "live", "--undo"]);
    expect(describeState(lift, await applyExclusion(query, lift))).toBe(
      `org ${org} (live) is no longer excluded (contribute true, consume true)`,
    );
    expect((await member(query, org)).map((m) => m.excluded)).toEqual([false, false]);
  });

  it("excludes an org that has not joined, before it can, and refuses an unknown org", async () => {
    const org = await newOrg(query);
    const lift = parseExclusion(["--org", org, "--mode", "test", "--undo"]);
    expect(describeState(lift, await applyExclusion(query, lift))).toBe(
      `org ${org} (test) is not a network member: nothing to lift`,
    );
    await applyExclusion(query, parseExclusion(["--org", org, "--mode", "test", "--reason", "r"]));
    expect(await member(query, org)).toEqual([
      { livemode: false, contribute: false, consume: false, excluded: true, excluded_reason: "r" },
    ]);
    const unknown = randomUUID();
    await expect(
      applyExclusion(query, parseExclusion(["--org", unknown, "--mode", "live", "--reason", "r"])),
    ).rejects.toThrow(`no organization ${unknown}`);
  });
});

/** The shell environment for the command: this test's own variables left out. */
function commandEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, ...extra };
  for (const key of Object.keys(env)) {
    if (key.startsWith("VITEST") || key === "NODE_ENV") delete env[key];
  }
  delete env.DATABASE_URL;
  return env;
}

async function command(argv: string[], env: Record<string, string> = {}) {
  try {
    const { stdout, stderr } = await promisify(execFile)(
      "npm",
      ["run", "-s", "network:exclude", "--", ...argv],
      { cwd: REPO, env: commandEnv(env) },
    );
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: failed.code ?? -1, stdout: failed.stdout ?? "", stderr: failed.stderr ?? "" };
  }
}

describe("npm run network:exclude", () => {
  it("refuses bad arguments with its usage, before any database", async () => {
    const res = await command(["--org", "acme", "--mode", "live"]);
    expect(res).toEqual({ code: 2, stdout: "", stderr: `--org must be an org's uuid\n${USAGE}\n` });
  }, 30_000);

  describe.runIf(DATABASE_URL)("on PostgreSQL", () => {
    let database: FreshDatabase;
    let client: pg.Client;

    beforeAll(async () => {
      database = await createFreshDatabase(DATABASE_URL ?? "");
      client = new pg.Client({ connectionString: database.url });
      await client.connect();
      await pgMigrate(pgDrizzle(client), { migrationsFolder: MIGRATIONS });
    }, 60_000);
    afterAll(async () => {
      await client?.end();
      await database?.drop();
    });

    it("excludes and lifts, as the owner", async () => {
      const query: Query = async (text, params) => (await client.query(text, params)).rows;
      const org = await newOrg(query);
      const owner = { DATABASE_OWNER_URL: database.url };
      const excluded = await command(
        ["--org", org, "--mode", "live", "--reason", "poisoning"],
        owner,
      );
      expect(excluded.code, excluded.stderr).toBe(0);
      expect(excluded.stdout).toMatch(
        new RegExp(
          `^org ${org} \\(live\\) excluded since \\S+: poisoning \\(contribute false, consume false\\)\\n$`,
        ),
      );
      expect(await member(query, org)).toEqual([
        {
          livemode: true,
          contribute: false,
          consume: false,
          excluded: true,
          excluded_reason: "poisoning",
        },
      ]);
      const lifted = await command(["--org", org, "--mode", "live", "--undo"], owner);
      expect(lifted.stdout).toBe(
        `org ${org} (live) is no longer excluded (contribute false, consume false)\n`,
      );
      expect((await member(query, org)).map((m) => m.excluded)).toEqual([false]);
    }, 60_000);
  });
});
