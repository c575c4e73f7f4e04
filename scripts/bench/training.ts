/**
 * `npm run bench:training [-- --rows 100000 --timeout 900]`
 *
 * What the risk-model training consumer (src/risk-models/training-job.ts) costs on a large
 * history: the same page query and event building (src/risk-models/history-read.ts), run as the
 * application role under row-level security on PGlite in memory (or a fresh database of the
 * PostgreSQL server named by DATABASE_URL), then the same training (`trainingOutcome`). The
 * history is generated in SQL so that the training span (the default 7-day window and 7-day
 * label delay before `as_of`) holds `--rows` payments, at the same daily rate over the
 * features' horizon before it (30 days plus the label delay), which the consumer reads too:
 * 100,000 rows read about 364,000 payments. A few payees are compromised for a while and large
 * amounts are often frauds, each fraud labelled a few days later, so the trainer has something
 * to learn and the model is of a realistic size.
 *
 * Printed: the pages and their largest JSON size (the SQL-over-HTTP driver's responses must stay
 * under 10 MB), the read's wall time, the training's CPU time, the JavaScript heap the events
 * hold and at its peak (run with --expose-gc, as the npm script does, for exact figures; a
 * Worker's isolate has 128 MB), and the model's metrics and parameter size.
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
import { type HistoryRow, historyWindow, readHistory } from "../../src/risk-models/history-read.ts";
import type { RiskModelRow } from "../../src/risk-models/records.ts";
import { trainingOutcome } from "../../src/risk-models/training-outcome.ts";
import { redactDatabaseUrl } from "../database-url.ts";
import { REPO_ROOT } from "../dev-state.ts";
import { createFreshDatabase } from "../sql-endpoint/fresh-database.ts";
import { optionsOrExit, type Run, runBench } from "./harness.ts";

const say = (line: string) => process.stdout.write(`${line}\n`);

const USAGE = `usage: npm run bench:training [-- options]
  --rows N      payments in the training span (default 100000)
  --timeout S   stop everything after S seconds (default 900)
DATABASE_URL=postgres://... selects a fresh database on that PostgreSQL server instead of PGlite.`;

function parseOptions(argv: string[]) {
  const { values } = parseArgs({
    args: argv,
    options: {
      rows: { type: "string", default: "100000" },
      timeout: { type: "string", default: "900" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) return null;
  const options = { rows: Number(values.rows), timeoutS: Number(values.timeout) };
  if (!Object.values(options).every((n) => Number.isInteger(n) && n >= 1)) {
    throw new Error("--rows and --timeout must be positive integers");
  }
  return options;
}

const { rows, timeoutS } = optionsOrExit(() => parseOptions(process.argv.slice(2)), USAGE);

const ORG = "0190f5a2-7c1e-7000-8000-00000000c001";
const USER = "0190f5a2-7c1e-7000-8000-00000000c002";
const DAY_MS = 86_400_000;
const AS_OF = Date.parse("2026-10-01T00:00:00.000Z");
const LABEL_DELAY_S = 7 * 86_400;
const TRAINING_WINDOW_S = 7 * 86_400;
const migrationsFolder = resolve(REPO_ROOT, "drizzle");

interface Db {
  execute(query: ReturnType<typeof sql>): Promise<{ rows: unknown[] }>;
  transaction<T>(run: (tx: Db) => Promise<T>): Promise<T>;
}

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

/**
 * `total` payments spread evenly over [from, AS_OF) by 1,000 agents and 2,000 payees (hashed,
 * so counts vary): amounts mostly 1–100 USD; payees whose hash puts them in a 1-in-40 group are
 * compromised for 10 days somewhere in the span (most of their payments then are frauds);
 * payments over 900 USD are frauds one time in three. Each fraud's label is known 3 days on.
 */
async function generate(db: Db, from: number, total: number) {
  await db.execute(sql`insert into users (id, idp_subject) values (${USER}, 'bench-training')`);
  await db.execute(
    sql`insert into organizations (id, name, founder_user_id) values (${ORG}, 'bench', ${USER})`,
  );
  const step = (AS_OF - from) / total;
  for (let first = 0; first < total; first += 20_000) {
    const last = Math.min(total, first + 20_000) - 1;
    await db.execute(sql`
      insert into payments (id, org_id, livemode, kind, agent_id, counterparty, amount,
        currency, occurred_at)
      select gen_random_uuid(), ${ORG}, true, 'ap2_payment',
        ('00000000-0000-7000-9000-' || lpad(to_hex(h.a % 1000), 12, '0'))::uuid,
        'payee-' || h.p % 2000, g.amount, 'USD', to_timestamp(g.t / 1000.0)
      from (select i, ${from}::float8 + i * ${step}::float8 as t,
              case when i % 97 = 0 then 90000 + (i::bigint * 7919) % 60000
                   else 100 + (i::bigint * 7919) % 9900 end as amount
            from generate_series(${first}::int, ${last}::int) i) g,
        lateral (select ('x' || substr(md5('a' || g.i), 1, 8))::bit(32)::bigint as a,
                        ('x' || substr(md5('p' || g.i), 1, 8))::bit(32)::bigint as p) h`);
  }
  // Frauds: compromised payees during their 10 days, and large amounts a third of the time.
  await db.execute(sql`
    insert into payment_labels (id, org_id, payment_id, livemode, label, known_at, source)
    select gen_random_uuid(), ${ORG}, p.id, true, 'fraud', p.occurred_at + interval '3 days',
      'import'
    from payments p
    where (substr(p.counterparty, 7)::int % 40 = 0
           and extract(epoch from p.occurred_at) * 1000
               between ${from}::float8 + (substr(p.counterparty, 7)::int / 40 % 42) * ${DAY_MS}::float8
                   and ${from}::float8 + (substr(p.counterparty, 7)::int / 40 % 42 + 10) * ${DAY_MS}::float8
           and ('x' || substr(md5(p.id::text), 1, 8))::bit(32)::bigint % 10 < 7)
       or (p.amount > 90000 and ('x' || substr(md5(p.id::text), 1, 8))::bit(32)::bigint % 3 = 0)`);
  await db.execute(sql`analyze payments`);
  await db.execute(sql`analyze payment_labels`);
}

const mib = (bytes: number) => `${(bytes / 1_048_576).toFixed(1)} MiB`;

function heap(): number {
  (globalThis as { gc?: () => void }).gc?.();
  return process.memoryUsage().heapUsed;
}

async function benchmark(run: Run): Promise<void> {
  const handle = await open(run);
  const window = historyWindow(true, AS_OF, LABEL_DELAY_S * 1000, TRAINING_WINDOW_S * 1000);
  const span = LABEL_DELAY_S * 1000 + TRAINING_WINDOW_S * 1000;
  const total = Math.round((rows * (AS_OF - window.from)) / span);
  say(
    `bench:training: ${handle.where}; generating ${total} payments (${rows} in the training span)…`,
  );
  const generated = Date.now();
  await generate(handle.db, window.from, total);
  say(`generated in ${((Date.now() - generated) / 1000).toFixed(1)} s`);
  if (!(globalThis as { gc?: () => void }).gc) say("(no --expose-gc: heap figures are rough)");

  const before = heap();
  let pages = 0;
  let largestPage = 0;
  let peakHeap = before;
  const started = performance.now();
  const events = await readHistory(window, (query) =>
    handle.db.transaction(async (tx) => {
      pages++;
      // As the consumer runs: the application role, under row-level security, in the org.
      await tx.execute(sql`set local role app_user`);
      await tx.execute(sql`select set_config('app.org_id', ${ORG}, true)`);
      const page = (await tx.execute(query)).rows as HistoryRow[];
      largestPage = Math.max(largestPage, JSON.stringify(page).length);
      peakHeap = Math.max(peakHeap, process.memoryUsage().heapUsed);
      return page;
    }),
  );
  const readSeconds = (performance.now() - started) / 1000;
  const held = heap() - before;
  say(
    `read ${events.length} payments in ${pages} pages in ${readSeconds.toFixed(2)} s ` +
      `(largest page ${mib(largestPage)} of JSON); the events hold ${mib(held)} of heap ` +
      `(${mib(before)} before the read)`,
  );

  const row: RiskModelRow = {
    id: "0190f5a2-7c1e-7000-8000-00000000c003",
    livemode: true,
    status: "training",
    version: null,
    asOf: new Date(AS_OF),
    testClockId: null,
    labelDelaySeconds: LABEL_DELAY_S,
    trainingWindowSeconds: TRAINING_WINDOW_S,
    targets: { review_precision: 0.25, deny_precision: 0.9 },
    counts: null,
    features: null,
    metrics: null,
    paramsDigest: null,
    card: null,
    failureReason: null,
    createdAt: new Date(),
    trainedAt: null,
    activatedAt: null,
  };
  const sampler = setInterval(() => {
    peakHeap = Math.max(peakHeap, process.memoryUsage().heapUsed);
  }, 20);
  const cpu = process.cpuUsage();
  const wall = performance.now();
  const outcome = trainingOutcome(events, row);
  const cpuSeconds = (() => {
    const used = process.cpuUsage(cpu);
    return (used.user + used.system) / 1e6;
  })();
  clearInterval(sampler);
  peakHeap = Math.max(peakHeap, process.memoryUsage().heapUsed);
  say(
    `trained in ${((performance.now() - wall) / 1000).toFixed(2)} s wall, ` +
      `${cpuSeconds.toFixed(2)} s CPU; heap peak ${mib(peakHeap - before)} above the start`,
  );
  if (outcome.status === "failed") {
    say(`failed: ${outcome.reason}`);
    return;
  }
  const metrics = outcome.metrics as Record<string, unknown>;
  say(
    `counts ${JSON.stringify(outcome.counts)}\n` +
      `auc_roc ${metrics.auc_roc} average_precision ${metrics.average_precision} ` +
      `card_precision_at_100 ${metrics.card_precision_at_100} brier ${metrics.brier_score}\n` +
      `parameters ${(JSON.stringify(outcome.params).length / 1024).toFixed(0)} KiB of JSON`,
  );
  say(`peak RSS ${mib(process.memoryUsage().rss)} (the database's too, when it is PGlite)`);
}

await runBench("bench:training", timeoutS, benchmark);
