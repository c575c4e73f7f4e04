/**
 * `npm run bench:backtest [-- --assessments 100000 --agents 200 --timeout 900]`
 *
 * Assessments replayed per second by `POST /v1/policies/{id}/backtest`'s engine
 * (src/policies/backtest.ts) over a generated history: the same page query (with the window
 * aggregates counted as of each assessment) and the same replay, on PGlite in memory, or on a
 * fresh database of the PostgreSQL server named by DATABASE_URL. The history is generated in
 * SQL: `--agents` agents of 20 principals, 500 payees, over 30 days (spread by an MD5
 * hash, so that window counts vary as they do in real traffic), with recorded inputs as
 * `POST /v1/assess` writes them. Two policies are replayed over all of it: one with limits and
 * rules that read the request only, and one whose rules also read window aggregates. Time is
 * wall-clock from the first page read to the result; the process's peak RSS is printed too,
 * since reading history in pages must keep memory flat. See docs/rules.md.
 */
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { PGlite } from "@electric-sql/pglite";
import { sql } from "drizzle-orm";
import { drizzle as pgDrizzle } from "drizzle-orm/node-postgres";
import { migrate as pgMigrate } from "drizzle-orm/node-postgres/migrator";
import { drizzle as liteDrizzle } from "drizzle-orm/pglite";
import { migrate as liteMigrate } from "drizzle-orm/pglite/migrator";
import pg from "pg";
import { normalizeRules, PolicyRules } from "../../src/assess/policy.ts";
import { backtest, type HistoryRow, historyPage } from "../../src/policies/backtest.ts";
import { redactDatabaseUrl } from "../database-url.ts";
import { REPO_ROOT } from "../dev-state.ts";
import { createFreshDatabase } from "../sql-endpoint/fresh-database.ts";
import { optionsOrExit, type Run, runBench } from "./harness.ts";

const say = (line: string) => process.stdout.write(`${line}\n`);

const USAGE = `usage: npm run bench:backtest [-- options]
  --assessments N  assessments in the generated history (default 100000)
  --agents N       agents they are spread over (default 200)
  --timeout S      stop everything after S seconds (default 900)
DATABASE_URL=postgres://... selects a fresh database on that PostgreSQL server instead of PGlite.`;

function parseOptions(argv: string[]) {
  const { values } = parseArgs({
    args: argv,
    options: {
      assessments: { type: "string", default: "100000" },
      agents: { type: "string", default: "200" },
      timeout: { type: "string", default: "900" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) return null;
  const options = {
    total: Number(values.assessments),
    agentCount: Number(values.agents),
    timeoutS: Number(values.timeout),
  };
  if (!Object.values(options).every((n) => Number.isInteger(n) && n >= 1)) {
    throw new Error("--assessments, --agents and --timeout must be positive integers");
  }
  return options;
}

const { total, agentCount, timeoutS } = optionsOrExit(
  () => parseOptions(process.argv.slice(2)),
  USAGE,
);

const ORG = "0190f5a2-7c1e-7000-8000-00000000b001";
const USER = "0190f5a2-7c1e-7000-8000-00000000b002";
const migrationsFolder = resolve(REPO_ROOT, "drizzle");

/** Anything drizzle can `execute` and run a transaction on: PGlite's and node-postgres'. */
interface Db {
  execute(query: ReturnType<typeof sql>): Promise<{ rows: unknown[] }>;
  transaction<T>(run: (tx: Db) => Promise<T>): Promise<T>;
}

/** The database, its every part registered with `run.defer` as it opens. */
async function open(run: Run): Promise<{ db: Db; where: string }> {
  const url = process.env.DATABASE_URL;
  if (url) {
    const fresh = await run.started(createFreshDatabase(url), (created) => created.drop());
    const pool = new pg.Pool({ connectionString: fresh.url, max: 2 });
    run.defer(() => pool.end());
    const db = pgDrizzle(pool);
    await pgMigrate(db, { migrationsFolder });
    return { db: db as unknown as Db, where: `PostgreSQL ${redactDatabaseUrl(fresh.url)}` };
  }
  const lite = await run.started(PGlite.create(), (created) => created.close());
  const db = liteDrizzle(lite);
  await liteMigrate(db, { migrationsFolder });
  return { db: db as unknown as Db, where: "PGlite in memory" };
}

async function generate(db: Db) {
  await db.execute(sql`insert into users (id, idp_subject) values (${USER}, 'bench-backtest')`);
  await db.execute(
    sql`insert into organizations (id, name, founder_user_id) values (${ORG}, 'bench', ${USER})`,
  );
  await db.execute(sql`insert into principals (id, org_id, type, wrapped_key)
    select ('00000000-0000-7000-8000-' || lpad(to_hex(p), 12, '0'))::uuid, ${ORG}, 'company', 'k'
    from generate_series(1, 20) p`);
  await db.execute(sql`insert into agents (id, org_id, principal_id, name, trust_reason,
      trust_score, risk_tier)
    select ('00000000-0000-7000-9000-' || lpad(to_hex(a), 12, '0'))::uuid, ${ORG},
      ('00000000-0000-7000-8000-' || lpad(to_hex(1 + a % 20), 12, '0'))::uuid, 'agent ' || a,
      'bench', 40 + a % 60, case when a % 60 > 40 then 'low' else 'medium' end
    from generate_series(1, ${agentCount}) a`);
  const start = Date.now() - 30 * 86_400_000;
  const step = Math.max(1, Math.floor((30 * 86_400_000) / total));
  // In chunks: one statement of 100,000 rows with their JSON is heavy for PGlite's memory.
  for (let first = 1; first <= total; first += 10_000) {
    const last = Math.min(total, first + 9_999);
    await db.execute(sql`
      insert into assessments (id, org_id, created_at, livemode, kind, mandate_type, mandate_id,
        content_hash, agent_id, agent, decision, risk_level, risk_score, reason, policy_version,
        confidences, signals, rejection_reasons, jws, kid, verify_url, audit_entry_id,
        audit_sequence, latency_ms, amount, currency, counterparty, inputs)
      select
        (lpad(to_hex(t), 12, '0') || '7000' || '8000' || lpad(to_hex(i), 12, '0'))::uuid,
        ${ORG}, to_timestamp(t / 1000.0), true, 'ap2_payment', 'payment', gen_random_uuid(),
        'bench:' || i, agent_id, null, d, case d when 'approve' then 'normal'
          when 'review' then 'elevated' else 'highest' end,
        case d when 'approve' then 20 when 'review' then 50 else 80 end, 'bench', 0,
        '{}'::jsonb, '[]'::jsonb, '[]'::jsonb, 'jws', 'kid', 'https://bench/jwks.json',
        gen_random_uuid(), i, 5, amount, currency, md5(payee), jsonb_build_object(
          'v', 1, 'mandate_type', 'payment',
          'facts', jsonb_build_object(
            'amount', jsonb_build_object('amount', amount, 'currency', currency),
            'payee', jsonb_build_object('id', payee, 'name', payee, 'website', null),
            'recipient', null, 'channel', null, 'transactionId', 'tx-' || i,
            'executionDate', null, 'instrumentType', 'card', 'limits', null,
            'issuedAt', null, 'expiresAt', null),
          'identity', jsonb_build_object(
            'agent', jsonb_build_object('id', agent_id, 'status', 'active',
              'trust_score', 40 + i % 60, 'risk_tier', 'medium', 'card_status', 'unverified'),
            'method', 'explicit', 'key', null, 'card', null, 'conflict', false),
          'history', jsonb_build_object('burst', i % 7, 'approvedCount', i % 40,
            'medianApprovedAmount', 5000, 'payeeSeen', i % 3 <> 0, 'recipientSeen', null),
          'geo', case when i % 11 = 0 then 'FR' else 'DE' end, 'now', t)
      from (
        select i, ${start}::bigint + i * ${step}::bigint as t,
          ('00000000-0000-7000-9000-' || lpad(to_hex(1 + ('x' || substr(md5('a' || i), 1, 8))::bit(32)::bigint % ${agentCount}), 12, '0'))::uuid
            as agent_id,
          (i * 7919) % 90000 + 100 as amount,
          case when i % 10 = 0 then 'EUR' else 'USD' end as currency,
          'merchant_' || ('x' || substr(md5('p' || i), 1, 8))::bit(32)::bigint % 500 as payee,
          case when i % 13 = 0 then 'review' when i % 29 = 0 then 'deny' else 'approve' end as d
        from generate_series(${first}::int, ${last}::int) i
      ) g`);
  }
  await db.execute(sql`analyze assessments`);
}

const POLICIES = {
  "request attributes": {
    max_amount: 80_000,
    currencies: ["USD", "EUR"],
    grammar: 1,
    rules: [
      {
        id: "fr-large",
        action: "deny",
        when: {
          all: [
            { attr: "geo.country", op: "eq", value: "FR" },
            { attr: "amount", op: "gt", value: 50_000 },
          ],
        },
      },
      {
        id: "low-trust",
        action: "review",
        when: { attr: "agent.trust_score", op: "lt", value: 50 },
      },
      {
        id: "new-payee-burst",
        action: "review",
        when: {
          all: [
            { attr: "signals", op: "contains", value: "payee_first_seen" },
            { attr: "signals", op: "contains", value: "activity_burst" },
          ],
        },
      },
      { id: "routine", action: "approve", when: { attr: "risk.score", op: "lt", value: 45 } },
    ],
  },
  "window aggregates": {
    velocity: { window: "1h", max: 30 },
    grammar: 1,
    rules: [
      {
        id: "agent-day",
        action: "review",
        when: { attr: "sum.agent.1d", op: "gt", value: 1_000_000 },
      },
      {
        id: "principal-hour",
        action: "review",
        when: { attr: "count.principal.1h", op: "gte", value: 13 },
      },
      { id: "payee-hot", action: "deny", when: { attr: "count.payee.1d", op: "gte", value: 13 } },
    ],
  },
};

async function benchmark(run: Run): Promise<void> {
  const handle = await open(run);
  say(`bench:backtest: ${handle.where}; generating ${total} assessments of ${agentCount} agents…`);
  const generated = Date.now();
  await generate(handle.db);
  say(`generated in ${((Date.now() - generated) / 1000).toFixed(1)} s`);

  let peakRss = process.memoryUsage().rss;
  for (const [name, raw] of Object.entries(POLICIES)) {
    const rules = normalizeRules(PolicyRules.parse(raw));
    const q = { livemode: true, from: null, to: null };
    let pages = 0;
    const readPage = (cursor: string | null, size: number) =>
      handle.db.transaction(async (tx) => {
        pages++;
        peakRss = Math.max(peakRss, process.memoryUsage().rss);
        // As the Worker runs: the application role, under row-level security, in the org.
        await tx.execute(sql`set local role app_user`);
        await tx.execute(sql`select set_config('app.org_id', ${ORG}, true)`);
        return (await tx.execute(historyPage(rules, q, cursor, size))).rows as HistoryRow[];
      });
    const started = performance.now();
    const result = await backtest(rules, readPage, { limit: total, samples: 20 });
    const seconds = (performance.now() - started) / 1000;
    say(
      `${name}: replayed ${result.replayed} assessments in ${seconds.toFixed(2)} s ` +
        `(${pages} pages): ${Math.round(result.replayed / seconds)} assessments/s; ` +
        `${result.changed} would change; rule hits ` +
        result.rules.map((r) => `${r.id}=${r.hits}`).join(" "),
    );
  }
  say(`peak RSS ${Math.round(peakRss / 1_048_576)} MiB`);
}

await runBench("bench:backtest", timeoutS, benchmark);
