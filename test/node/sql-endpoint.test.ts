import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server, type Socket, connect as tcpConnect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type NeonQueryFunction, neon, neonConfig } from "@neondatabase/serverless";
import pg from "pg";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  type SqlEndpoint,
  type SqlEndpointOptions,
  startSqlEndpoint,
} from "../../scripts/sql-endpoint/index";
import { ANALYZE_CHECK_MS } from "../../scripts/sql-endpoint/pglite-backend";
import { SerialQueue } from "../../scripts/sql-endpoint/serial-queue";

const DATABASE_URL = process.env.DATABASE_URL;
const APP_URL = "postgresql://app_user:x@localhost/app";
const OWNER_URL = "postgresql://owner:x@localhost/app";

const MIGRATION = `
DO $$ BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'app_user') THEN
    CREATE ROLE app_user NOLOGIN;
  END IF;
END $$;
--> statement-breakpoint
CREATE TABLE "items" (
  "id" uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  "org_id" uuid NOT NULL,
  "name" text NOT NULL,
  "created_at" timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT "items_org_name_unique" UNIQUE ("org_id", "name")
);
--> statement-breakpoint
ALTER TABLE "items" ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE "items" FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY "items_tenant" ON "items"
  USING ("org_id" = nullif(current_setting('app.org_id', true), '')::uuid)
  WITH CHECK ("org_id" = nullif(current_setting('app.org_id', true), '')::uuid);
--> statement-breakpoint
GRANT USAGE ON SCHEMA public TO app_user;
--> statement-breakpoint
GRANT SELECT, INSERT, UPDATE, DELETE ON "items" TO app_user;
`;

const scratch = mkdtempSync(join(tmpdir(), "sql-endpoint-test-"));
const migrationsFolder = join(scratch, "drizzle");
mkdirSync(join(migrationsFolder, "meta"), { recursive: true });
writeFileSync(join(migrationsFolder, "0000_items.sql"), MIGRATION);
writeFileSync(
  join(migrationsFolder, "meta", "_journal.json"),
  JSON.stringify({
    version: "7",
    dialect: "postgresql",
    entries: [
      { idx: 0, version: "7", when: 1_700_000_000_000, tag: "0000_items", breakpoints: true },
    ],
  }),
);
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const backends: { name: string; options: Omit<SqlEndpointOptions, "migrationsFolder"> }[] = [
  { name: "pglite", options: {} },
];
if (DATABASE_URL)
  backends.push({ name: "postgres", options: { databaseUrl: DATABASE_URL, fresh: true } });

const newOrg = (): string => crypto.randomUUID();

/** Statements a tenant-scoped batch starts with, as the application does. */
function inOrg(sql: NeonQueryFunction<false, false>, orgId: string) {
  return sql`select set_config('app.org_id', ${orgId}, true)`;
}

async function postSql(endpoint: SqlEndpoint, body: string, user = "app_user"): Promise<Response> {
  return fetch(endpoint.url, {
    method: "POST",
    body,
    headers: {
      "Neon-Connection-String": `postgresql://${user}:x@localhost/app`,
      "Neon-Raw-Text-Output": "true",
      "Neon-Array-Mode": "true",
    },
  });
}

describe.each(backends)("sql endpoint on $name", ({ name, options }) => {
  let endpoint: SqlEndpoint;
  let sql: NeonQueryFunction<false, false>;
  let owner: NeonQueryFunction<false, false>;

  beforeAll(async () => {
    endpoint = await startSqlEndpoint({ ...options, migrationsFolder });
    sql = neon(APP_URL);
    owner = neon(OWNER_URL);
  });
  afterAll(() => endpoint?.close());
  // fetchEndpoint is global to the driver; each backend's suite points it at its own endpoint.
  beforeEach(() => {
    neonConfig.fetchEndpoint = endpoint.url;
  });

  it("reports its backend on /health", async () => {
    expect(endpoint.backend).toBe(name);
    const health = await fetch(new URL("/health", endpoint.url));
    expect(await health.json()).toEqual({ ok: true, backend: name });
  });

  it("returns Postgres text output that the driver parses into typed values", async () => {
    const at = new Date("2024-05-06T07:08:09.123Z");
    const uuid = "0e2b8a9c-3f7d-4b1e-9c6a-5d4e3f2a1b0c";
    const [row] = await sql`
      select 1::int4 as int, 9007199254740993::int8 as big, true as yes, false as no,
        ${at}::timestamptz as at, '{"a":[1,2],"b":null}'::jsonb as doc,
        array['x', 'y z', null]::text[] as tags, ${uuid}::uuid as id, null::text as nothing,
        12.50::numeric as amount, ${Buffer.from([1, 2, 255])}::bytea as bytes,
        ${{ k: "v" }}::jsonb as param_doc, ${[1, 2, 3]}::int4[] as numbers`;
    expect(row).toEqual({
      int: 1,
      big: "9007199254740993",
      yes: true,
      no: false,
      at,
      doc: { a: [1, 2], b: null },
      tags: ["x", "y z", null],
      id: uuid,
      nothing: null,
      amount: "12.50",
      bytes: Buffer.from([1, 2, 255]),
      param_doc: { k: "v" },
      numbers: [1, 2, 3],
    });
  });

  it("answers with command, rowCount and field metadata", async () => {
    const orgId = newOrg();
    const inserted = await owner.query(
      "insert into items (org_id, name) values ($1, 'a'), ($1, 'b') returning id",
      [orgId],
      { fullResults: true },
    );
    expect(inserted.command).toBe("INSERT");
    expect(inserted.rowCount).toBe(2);
    expect(inserted.fields.map((field) => [field.name, field.dataTypeID])).toEqual([["id", 2950]]);
  });

  it("commits a batch as a whole", async () => {
    const orgId = newOrg();
    await sql.transaction([
      inOrg(sql, orgId),
      sql`insert into items (org_id, name) values (${orgId}, 'first')`,
      sql`insert into items (org_id, name) values (${orgId}, 'second')`,
    ]);
    const rows = await owner`select name from items where org_id = ${orgId} order by name`;
    expect(rows).toEqual([{ name: "first" }, { name: "second" }]);
  });

  it("rolls back a whole batch when one statement fails, with the Postgres error fields", async () => {
    const orgId = newOrg();
    await sql.transaction([
      inOrg(sql, orgId),
      sql`insert into items (org_id, name) values (${orgId}, 'dup')`,
    ]);
    const failing = sql.transaction([
      inOrg(sql, orgId),
      sql`insert into items (org_id, name) values (${orgId}, 'kept?')`,
      sql`insert into items (org_id, name) values (${orgId}, 'dup')`,
    ]);
    await expect(failing).rejects.toMatchObject({
      code: "23505",
      constraint: "items_org_name_unique",
      severity: "ERROR",
    });
    const rows = await owner`select name from items where org_id = ${orgId}`;
    expect(rows).toEqual([{ name: "dup" }]);
  });

  it("answers SQL errors with HTTP 400 and the SQLSTATE fields", async () => {
    const response = await postSql(endpoint, JSON.stringify({ query: "select 1/0", params: [] }));
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({
      message: "division by zero",
      code: "22012",
      severity: "ERROR",
    });
  });

  it("answers malformed requests with HTTP 400 and a message", async () => {
    for (const body of [
      "{not json",
      JSON.stringify({ params: [] }),
      JSON.stringify({ queries: 1 }),
    ]) {
      const response = await postSql(endpoint, body);
      expect(response.status).toBe(400);
      expect(await response.json()).toHaveProperty("message");
    }
    const noConnection = await fetch(endpoint.url, {
      method: "POST",
      body: '{"query":"select 1"}',
    });
    expect(noConnection.status).toBe(400);
    expect((await fetch(new URL("/nope", endpoint.url))).status).toBe(404);
  });

  it("scopes RLS to the batch that sets app.org_id, and only that batch", async () => {
    const orgA = newOrg();
    const orgB = newOrg();
    await sql.transaction([
      inOrg(sql, orgA),
      sql`insert into items (org_id, name) values (${orgA}, 'a')`,
    ]);
    await sql.transaction([
      inOrg(sql, orgB),
      sql`insert into items (org_id, name) values (${orgB}, 'b')`,
    ]);

    const [, visible] = await sql.transaction([
      inOrg(sql, orgA),
      sql`select org_id, name from items`,
    ]);
    expect(visible).toEqual([{ org_id: orgA, name: "a" }]);

    const [setting] = await sql`select nullif(current_setting('app.org_id', true), '') as org`;
    expect(setting).toEqual({ org: null });
    expect(await sql`select * from items`).toEqual([]);

    const crossTenant = sql.transaction([
      inOrg(sql, orgA),
      sql`insert into items (org_id, name) values (${orgB}, 'sneaky')`,
    ]);
    await expect(crossTenant).rejects.toMatchObject({ code: "42501" });
  });

  it("does not carry session-level settings over to the next request", async () => {
    await sql`select set_config('app.org_id', ${newOrg()}, false)`;
    const [setting] = await sql`select nullif(current_setting('app.org_id', true), '') as org`;
    expect(setting).toEqual({ org: null });
  });

  it("does not carry a changed session authorization or role over", async () => {
    const [before] = await owner`select session_user as who`;
    await sql`set session authorization app_user`;
    await owner`set role app_user`;
    expect(await owner`select session_user as who`).toEqual([before]);
    expect(await owner`select current_user = session_user as own`).toEqual([{ own: true }]);
  });

  it("does not carry a temp table or an advisory lock over either", async () => {
    await sql.transaction([
      sql`create temp table left_behind (secret text)`,
      sql`insert into left_behind values ('tenant a')`,
      sql`select pg_advisory_lock(4242)`,
      sql`create temp sequence counter`,
      sql`select nextval('counter')`,
    ]);
    const [tables, locks] = await sql.transaction([
      sql`select count(*)::int as n from pg_class where relname in ('left_behind', 'counter')`,
      sql`select count(*)::int as n from pg_locks where locktype = 'advisory' and pid = pg_backend_pid()`,
    ]);
    expect(tables).toEqual([{ n: 0 }]);
    expect(locks).toEqual([{ n: 0 }]);
  });

  it("runs as the role from the connection string; owner means no SET ROLE", async () => {
    const orgA = newOrg();
    const orgB = newOrg();
    await owner`insert into items (org_id, name) values (${orgA}, 'x'), (${orgB}, 'y')`;
    expect(await sql`select current_user as role`).toEqual([{ role: "app_user" }]);
    // The endpoint's own connection role: postgres on PGlite, the URL's user on PostgreSQL.
    expect(await owner`select current_user = session_user as own`).toEqual([{ own: true }]);
    const [seen] = await owner`
      select count(*)::int as n from items where org_id in (${orgA}, ${orgB})`;
    expect(seen).toEqual({ n: 2 });
    const unknownRole = neon("postgresql://no_such_role:x@localhost/app")`select 1`;
    await expect(unknownRole).rejects.toMatchObject({ code: "22023" });
  });

  it("honours isolation level, read-only and deferrable options", async () => {
    const strict = await sql.transaction(
      [
        sql`show transaction_isolation`,
        sql`show transaction_read_only`,
        sql`show transaction_deferrable`,
      ],
      { isolationLevel: "Serializable", readOnly: true, deferrable: true },
    );
    expect(strict).toEqual([
      [{ transaction_isolation: "serializable" }],
      [{ transaction_read_only: "on" }],
      [{ transaction_deferrable: "on" }],
    ]);
    const repeatable = await sql.transaction([sql`show transaction_isolation`], {
      isolationLevel: "RepeatableRead",
    });
    expect(repeatable).toEqual([[{ transaction_isolation: "repeatable read" }]]);
    expect(await sql`show transaction_isolation`).toEqual([
      { transaction_isolation: "read committed" },
    ]);

    const orgId = newOrg();
    const write = sql.transaction(
      [inOrg(sql, orgId), sql`insert into items (org_id, name) values (${orgId}, 'ro')`],
      { readOnly: true },
    );
    await expect(write).rejects.toMatchObject({ code: "25006" });
  });

  it("serves 50 concurrent transactions without interleaving them", async () => {
    const orgs = Array.from({ length: 50 }, newOrg);
    const answers = await Promise.all(
      orgs.map((orgId) =>
        sql.transaction([
          inOrg(sql, orgId),
          sql`insert into items (org_id, name) values (${orgId}, 'c')`,
          sql`select current_setting('app.org_id') as org, count(*)::int as n from items`,
        ]),
      ),
    );
    expect(answers.map((answer) => answer[2])).toEqual(orgs.map((org) => [{ org, n: 1 }]));
  });

  it("counts requests, statements, batches, errors and the bytes of the SQL requests", async () => {
    const reset = await fetch(new URL("/stats/reset", endpoint.url), { method: "POST" });
    expect(reset.status).toBe(200);
    await sql`select 1`;
    await sql.transaction([sql`select 1`, sql`select 2`, sql`select 3`]);
    await expect(sql`select 1/0`).rejects.toThrow();
    const counted = { requests: 3, statements: 5, batches: 1, errors: 1 };
    const { bytesIn, bytesOut, ...counts } = endpoint.stats();
    expect(counts).toEqual(counted);
    expect(await (await fetch(new URL("/stats", endpoint.url))).json()).toEqual({
      ...counted,
      bytesIn,
      bytesOut,
    });

    // What crosses the wire, both ways, and nothing of /stats itself.
    await fetch(new URL("/stats/reset", endpoint.url), { method: "POST" });
    const body = JSON.stringify({ query: "select 'é' as word", params: [] });
    const res = await fetch(new URL("/sql", endpoint.url), {
      method: "POST",
      headers: {
        "neon-connection-string": APP_URL,
        "neon-raw-text-output": "true",
        "neon-array-mode": "true",
      },
      body,
    });
    const answer = await res.text();
    expect(res.status).toBe(200);
    expect(endpoint.stats()).toMatchObject({
      requests: 1,
      bytesIn: Buffer.byteLength(body),
      bytesOut: Buffer.byteLength(answer),
    });
  });
});

describe("PGlite data directory", () => {
  const dataDir = join(scratch, "pglite");

  it("keeps data across restarts, re-applies no migration and leaves no lock behind", async () => {
    const orgId = newOrg();
    const first = await startSqlEndpoint({ dataDir, migrationsFolder });
    neonConfig.fetchEndpoint = first.url;
    await neon(OWNER_URL)`insert into items (org_id, name) values (${orgId}, 'persisted')`;
    await first.close();
    expect(existsSync(join(dataDir, "postmaster.pid"))).toBe(false);

    const second = await startSqlEndpoint({ dataDir, migrationsFolder });
    try {
      neonConfig.fetchEndpoint = second.url;
      const owner = neon(OWNER_URL);
      expect(await owner`select name from items where org_id = ${orgId}`).toEqual([
        { name: "persisted" },
      ]);
      expect(await owner`select count(*)::int as n from drizzle.__drizzle_migrations`).toEqual([
        { n: 1 },
      ]);
    } finally {
      await second.close();
    }
  });
});

describe("PGlite statistics", () => {
  // PGlite has no autovacuum: the endpoint analyzes a table once PostgreSQL's autoanalyze would
  // (more than 50 + 10 % of its rows changed), looking at most once a second, between requests
  // (scripts/sql-endpoint/pglite-backend.ts).
  it("analyzes a table once autoanalyze would, whatever statement wrote its rows", async () => {
    const endpoint = await startSqlEndpoint({ migrationsFolder });
    try {
      neonConfig.fetchEndpoint = endpoint.url;
      const owner = neon(OWNER_URL);
      const analyzed = async () =>
        (
          await owner`select s.n_live_tup::int as rows, s.last_analyze is not null as analyzed
            from pg_stat_user_tables s where s.relname = 'items'`
        )[0];
      const orgId = newOrg();
      const past = () => new Promise((resolve) => setTimeout(resolve, ANALYZE_CHECK_MS + 100));
      // Rows a function writes: a SELECT to the endpoint, as the network's contributions are.
      await owner`create function add_items(p_org uuid, p_from int, p_to int) returns void
        language sql as $$ insert into items (org_id, name)
          select p_org, 'item-' || i from generate_series(p_from, p_to) i $$`;
      await owner`select add_items(${orgId}::uuid, 1, 50)`;
      await past();
      await owner`select 1`; // looks, and finds 50 changed rows: not more than 50
      expect(await analyzed()).toEqual({ rows: 50, analyzed: false });
      await past();
      await owner`select add_items(${orgId}::uuid, 51, 51)`; // 51: due, analyzed behind it
      expect(await analyzed()).toEqual({ rows: 51, analyzed: true });
      const [estimate] =
        await owner`select reltuples::int as n from pg_class where relname = 'items'`;
      expect(estimate).toEqual({ n: 51 });
    } finally {
      await endpoint.close();
    }
  });
});

describe.runIf(DATABASE_URL)("PostgreSQL database used as is", () => {
  const name = `agent_risk_test_asis_${process.pid}`;
  const admin = async (statement: string) => {
    const client = new pg.Client({ connectionString: DATABASE_URL });
    await client.connect();
    await client.query(statement).finally(() => client.end());
  };
  const databaseUrl = (): string => {
    const url = new URL(DATABASE_URL ?? "");
    url.pathname = `/${name}`;
    return url.toString();
  };
  beforeAll(() => admin(`CREATE DATABASE "${name}"`));
  afterAll(() => admin(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`));

  it("keeps data across restarts and re-applies no migration", async () => {
    const orgId = newOrg();
    const first = await startSqlEndpoint({ databaseUrl: databaseUrl(), migrationsFolder });
    neonConfig.fetchEndpoint = first.url;
    await neon(OWNER_URL)`insert into items (org_id, name) values (${orgId}, 'persisted')`;
    await first.close();

    const second = await startSqlEndpoint({ databaseUrl: databaseUrl(), migrationsFolder });
    try {
      neonConfig.fetchEndpoint = second.url;
      const owner = neon(OWNER_URL);
      expect(await owner`select count(*)::int as n from items`).toEqual([{ n: 1 }]);
      expect(await owner`select count(*)::int as n from drizzle.__drizzle_migrations`).toEqual([
        { n: 1 },
      ]);
    } finally {
      await second.close();
    }
  });
});

describe("SerialQueue", () => {
  // Over HTTP, PGlite work happens to complete within one event-loop turn, so interleaving cannot
  // be provoked end to end; this pins down the guarantee the PGlite backend relies on.
  it("runs tasks one at a time, in order, even after a failure", async () => {
    const queue = new SerialQueue();
    const events: string[] = [];
    const task =
      (name: string, fail = false) =>
      async () => {
        events.push(`start ${name}`);
        await new Promise((resolve) => setTimeout(resolve, 5));
        events.push(`end ${name}`);
        if (fail) throw new Error(name);
        return name;
      };
    const results = await Promise.allSettled([
      queue.run(task("a")),
      queue.run(task("b", true)),
      queue.run(task("c")),
    ]);
    expect(results.map((result) => result.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    expect(events).toEqual(["start a", "end a", "start b", "end b", "start c", "end c"]);
  });
});

/** A TCP relay to PostgreSQL that can be cut and restored, to make the server unreachable. */
function relay(target: URL) {
  const sockets = new Set<Socket>();
  let server: Server | undefined;
  return {
    async open(port = 0): Promise<number> {
      server = createServer((inbound) => {
        const outbound = tcpConnect(Number(target.port || 5432), target.hostname);
        for (const socket of [inbound, outbound]) {
          sockets.add(socket);
          socket.on("close", () => sockets.delete(socket));
          socket.on("error", () => undefined);
        }
        inbound.pipe(outbound).pipe(inbound);
      });
      await new Promise<void>((resolve) => server?.listen(port, "127.0.0.1", resolve));
      const address = server.address();
      return typeof address === "object" && address !== null ? address.port : port;
    },
    async cut(): Promise<void> {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server?.close(resolve));
    },
  };
}

describe.runIf(DATABASE_URL)("PostgreSQL server unreachable", () => {
  it("answers 503 while the server is unreachable and recovers afterwards", async () => {
    const proxy = relay(new URL(DATABASE_URL ?? ""));
    const port = await proxy.open();
    const url = new URL(DATABASE_URL ?? "");
    url.host = `127.0.0.1:${port}`;
    const endpoint = await startSqlEndpoint({
      databaseUrl: url.toString(),
      fresh: true,
      migrationsFolder,
    });
    try {
      const query = JSON.stringify({ query: "select 1", params: [] });
      expect((await postSql(endpoint, query)).status).toBe(200);
      await proxy.cut();
      const down = await postSql(endpoint, query);
      expect(down.status).toBe(503);
      expect(await down.text()).toMatch(/database unavailable/);
      await proxy.open(port);
      expect((await postSql(endpoint, query)).status).toBe(200);
    } finally {
      await endpoint.close();
      await proxy.cut();
    }
  });
});
