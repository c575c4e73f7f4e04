/**
 * `npm run bench:ledger [-- --appends 5000 --concurrency 1,16,64 --orgs 50 --per-org 100]`
 *
 * Throughput, latency and database round trips of the per-org audit ledger (the OrgLedger
 * Durable Object, src/org-ledger/org-ledger.ts), run for real: workers/main.ts bundled and run in
 * workerd by Miniflare (SQLite-backed DO), Postgres behind the local Neon-compatible SQL
 * endpoint (scripts/sql-endpoint): PGlite in memory, or a fresh database on the PostgreSQL
 * server named by DATABASE_URL. Appends are issued inside workerd by a benchmark-only Worker
 * (ledger-driver.ts) bound to the real DO class; `--driver proxy` issues them from Node through
 * Miniflare's proxy instead, to show what that hop costs. See docs/performance.md.
 *
 * Scenarios, each run `--runs` times (default 3) on fresh orgs, medians reported:
 *   1 org:   `--appends` single-entry appends with C in flight, for each C of `--concurrency`;
 *   N orgs:  `--orgs` × `--per-org` appends, interleaved, `--orgs-concurrency` in flight overall.
 * `--appends 0` or `--orgs 0` skips a scenario. The whole run stops after `--timeout` seconds.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { cpus, loadavg, tmpdir, totalmem } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { neon, neonConfig } from "@neondatabase/serverless";
import { type BuildOptions, build, stop as stopEsbuild } from "esbuild";
import { Log, LogLevel, Miniflare } from "miniflare";
import { redactDatabaseUrl } from "../database-url.ts";
import { REPO_ROOT } from "../dev-state.ts";
import { ed25519Jwk, localDatabaseUrl, p256Jwk } from "../local-keys.ts";
import { type SqlEndpoint, startSqlEndpoint } from "../sql-endpoint/index.ts";
import { type CpuShare, cpuShare, sampleCpu } from "./cpu.ts";
import { optionsOrExit, type Run, runBench, withoutSignalHooks } from "./harness.ts";
import { startNullSqlEndpoint } from "./ledger-null-db.ts";
import { type WireCounts, WireWatch } from "./ledger-wire.ts";
import { benchInput, interleavedJobs, type PoolOutcome, runPool } from "./pool.ts";

const COMPATIBILITY_DATE = "2026-04-26"; // as wrangler.toml
/** Below undici's 300 s headers timeout on the Node -> workerd request that carries a run. */
const MAX_RUN_BUDGET_MS = 240_000;
/** Unmeasured appends before each single-org run (JIT, DO start, driver's connection pool). */
const WARM_APPENDS = 100;
/** The target of this benchmark on the 2-core development machine. */
const TARGET_APPENDS_PER_S = 1000;
/** The fewest appends in flight at which the target must hold (issue 21: 16, not only 64). */
const TARGET_CONCURRENCY = 16;

const say = (line: string) => process.stdout.write(`${line}\n`);

// --- Options -------------------------------------------------------------------------------

interface Options {
  appends: number;
  concurrency: number[];
  orgs: number;
  perOrg: number;
  orgsConcurrency: number;
  runs: number;
  driver: "worker" | "proxy";
  /** A database that costs nothing (ledger-null-db.ts): the Worker and DO alone. */
  nullDb: boolean;
  timeoutS: number;
}

const USAGE = `usage: npm run bench:ledger [-- options]
  --appends N            single-org appends per run (default 5000; 0 skips)
  --concurrency C[,C..]  appends in flight for the single-org runs (default 1,16,64)
  --orgs N               orgs of the many-orgs scenario (default 50; 0 skips)
  --per-org N            appends per org there (default 100)
  --orgs-concurrency C   appends in flight overall there (default 64)
  --runs N               runs per scenario, medians reported (default 3)
  --driver worker|proxy  issue appends inside workerd (default) or from Node via Miniflare's proxy
  --null-db              answer every SQL request at once, storing nothing: the DO's own ceiling
  --timeout S            stop everything after S seconds (default 900)
DATABASE_URL=postgres://... selects a fresh database on that PostgreSQL server instead of PGlite.`;

function integer(name: string, value: string | undefined, fallback: number, max: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > max) {
    throw new Error(`--${name} must be an integer from 0 to ${max}, got ${JSON.stringify(value)}`);
  }
  return n;
}

function parseOptions(argv: string[]): Options | null {
  const { values } = parseArgs({
    args: argv,
    options: {
      appends: { type: "string" },
      concurrency: { type: "string" },
      orgs: { type: "string" },
      "per-org": { type: "string" },
      "orgs-concurrency": { type: "string" },
      runs: { type: "string" },
      driver: { type: "string" },
      "null-db": { type: "boolean" },
      timeout: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
    strict: true,
  });
  if (values.help) return null;
  const concurrency = (values.concurrency ?? "1,16,64")
    .split(",")
    .map((c) => integer("concurrency", c.trim(), 1, 1024));
  if (concurrency.some((c) => c < 1)) throw new Error("--concurrency values must be at least 1");
  const driver = values.driver ?? "worker";
  if (driver !== "worker" && driver !== "proxy") {
    throw new Error(`--driver must be worker or proxy, got ${JSON.stringify(driver)}`);
  }
  const options: Options = {
    appends: integer("appends", values.appends, 5000, 100_000),
    concurrency,
    orgs: integer("orgs", values.orgs, 50, 1000),
    perOrg: integer("per-org", values["per-org"], 100, 10_000),
    orgsConcurrency: integer("orgs-concurrency", values["orgs-concurrency"], 64, 1024),
    runs: integer("runs", values.runs, 3, 20),
    driver,
    nullDb: values["null-db"] ?? false,
    timeoutS: integer("timeout", values.timeout, 900, 3600),
  };
  if (options.runs < 1) throw new Error("--runs must be at least 1");
  if (options.orgs > 0 && (options.perOrg < 1 || options.orgsConcurrency < 1)) {
    throw new Error("--per-org and --orgs-concurrency must be at least 1");
  }
  return options;
}

// --- Scenarios and results -----------------------------------------------------------------

interface Scenario {
  label: string;
  orgCount: number;
  perOrg: number;
  concurrency: number;
  /** Unmeasured appends per org before the measured ones. */
  warmPerOrg: number;
}

interface RunResult {
  scenario: Scenario;
  run: number;
  completed: number;
  appendsPerS: number;
  p50: number;
  p99: number;
  /** Endpoint stats: HTTP requests (database round trips) during the run, all orgs. */
  requests: number;
  rtPerAppend: number;
  /** Requests that wrote entries (one flushed group-commit batch each). */
  batches: number;
  /** Round trips of the run's orgs, checkpoint-only writes excluded, per batch: should be 1. */
  rtPerBatch: number;
  avgBatch: number;
  maxBatch: number;
  wire: WireCounts;
  cpu: CpuShare;
  endpointErrors: number;
}

function scenarios(options: Options): Scenario[] {
  const list: Scenario[] = [];
  if (options.appends > 0) {
    for (const concurrency of options.concurrency) {
      list.push({
        label: `1 org × ${options.appends}, C=${concurrency}`,
        orgCount: 1,
        perOrg: options.appends,
        concurrency,
        warmPerOrg: Math.min(WARM_APPENDS, options.appends),
      });
    }
  }
  if (options.orgs > 0) {
    list.push({
      label: `${options.orgs} orgs × ${options.perOrg}, C=${options.orgsConcurrency}`,
      orgCount: options.orgs,
      perOrg: options.perOrg,
      concurrency: options.orgsConcurrency,
      warmPerOrg: 1,
    });
  }
  return list;
}

function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1] as number;
}

function median(values: readonly (number | null)[]): number | null {
  const known = values.filter((v): v is number => v !== null && Number.isFinite(v));
  if (known.length === 0) return null;
  const sorted = [...known].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

function fixed(value: number | null, digits: number): string {
  return value === null || !Number.isFinite(value) ? "-" : value.toFixed(digits);
}

/** Column widths: the headers', widened to the cells and to the given minimums. */
function widths(headers: string[], rows: string[][], minimums: number[] = []): number[] {
  return headers.map((h, i) =>
    Math.max(h.length, minimums[i] ?? 0, ...rows.map((r) => (r[i] ?? "").length)),
  );
}

function line(cells: string[], columnWidths: number[]): string {
  return cells
    .map((c, i) => (i === 0 ? c.padEnd(columnWidths[i] ?? 0) : c.padStart(columnWidths[i] ?? 0)))
    .join("  ");
}

function table(headers: string[], rows: string[][], columnWidths = widths(headers, rows)): string {
  const rule = columnWidths.map((w) => "-".repeat(w)).join("  ");
  return [line(headers, columnWidths), rule, ...rows.map((r) => line(r, columnWidths))].join("\n");
}

const HEADERS = [
  "scenario",
  "appends/s",
  "p50 ms",
  "p99 ms",
  "rt/append",
  "batches",
  "rt/batch",
  "avg batch",
  "max batch",
  "ckpt",
  "node%",
  "workerd%",
  "host%",
];

function resultCells(label: string, rows: RunResult[]): string[] {
  const m = (pick: (r: RunResult) => number | null) => median(rows.map(pick));
  return [
    label,
    fixed(
      m((r) => r.appendsPerS),
      0,
    ),
    fixed(
      m((r) => r.p50),
      1,
    ),
    fixed(
      m((r) => r.p99),
      1,
    ),
    fixed(
      m((r) => r.rtPerAppend),
      3,
    ),
    fixed(
      m((r) => r.batches),
      0,
    ),
    fixed(
      m((r) => r.rtPerBatch),
      2,
    ),
    fixed(
      m((r) => r.avgBatch),
      1,
    ),
    fixed(
      m((r) => r.maxBatch),
      0,
    ),
    fixed(
      m((r) => r.wire.checkpointWrites),
      0,
    ),
    fixed(
      m((r) => r.cpu.node),
      0,
    ),
    fixed(
      m((r) => r.cpu.children),
      0,
    ),
    fixed(
      m((r) => r.cpu.host),
      0,
    ),
  ];
}

// --- Setup ---------------------------------------------------------------------------------

function version(pkg: string): string {
  try {
    const require = createRequire(join(REPO_ROOT, "package.json"));
    return (
      JSON.parse(readFileSync(require.resolve(`${pkg}/package.json`), "utf8")) as {
        version: string;
      }
    ).version;
  } catch {
    return "?";
  }
}

/** The filesystem type under a path (Linux /proc/mounts), e.g. "tmpfs" or "ext4". */
function filesystemOf(path: string): string {
  try {
    let best = { point: "", type: "?" };
    for (const entry of readFileSync("/proc/mounts", "utf8").split("\n")) {
      const [, point = "", type = "?"] = entry.split(" ");
      const covers = path === point || path.startsWith(point === "/" ? "/" : `${point}/`);
      if (covers && point.length >= best.point.length) best = { point, type };
    }
    return best.type;
  } catch {
    return "?";
  }
}

async function bundle(outDir: string): Promise<{ main: string; driver: string }> {
  const common: BuildOptions = {
    bundle: true,
    format: "esm",
    platform: "neutral",
    conditions: ["workerd", "worker", "browser"],
    mainFields: ["module", "main"],
    external: ["cloudflare:*", "node:*"],
    target: "es2022",
    logLevel: "warning",
  };
  const main = join(outDir, "main.js");
  const driver = join(outDir, "driver.js");
  try {
    await build({ ...common, entryPoints: [join(REPO_ROOT, "workers/main.ts")], outfile: main });
    await build({
      ...common,
      entryPoints: [join(import.meta.dirname, "ledger-driver.ts")],
      outfile: driver,
    });
  } finally {
    await stopEsbuild(); // its service process would otherwise idle on as a child until exit
  }
  return { main, driver };
}

/** Users and orgs as the owner (audit_entries.org_id references organizations), in one request. */
async function createOrgs(endpoint: SqlEndpoint, count: number): Promise<string[]> {
  const owner = neon(localDatabaseUrl(endpoint.url, "owner"));
  const orgIds = Array.from({ length: count }, () => crypto.randomUUID());
  const userIds = Array.from({ length: count }, () => crypto.randomUUID());
  await owner.transaction([
    owner.query(
      "insert into users (id, idp_subject) select u, 'bench-' || u from unnest($1::uuid[]) as u",
      [userIds],
    ),
    owner.query(
      `insert into organizations (id, name, founder_user_id)
       select o, 'bench', u from unnest($1::uuid[], $2::uuid[]) as t(o, u)`,
      [orgIds, userIds],
    ),
  ]);
  return orgIds;
}

/** Every org has exactly the rows its appends returned for: nothing lost, nothing doubled. */
async function verifyRows(endpoint: SqlEndpoint, orgIds: string[], expected: number) {
  const owner = neon(localDatabaseUrl(endpoint.url, "owner"));
  const rows = (await owner.query(
    `select o::text as org_id, (select count(*) from audit_entries e where e.org_id = o)::int as n,
            (select count(distinct sequence) from audit_entries e where e.org_id = o)::int as seqs,
            (select max(sequence) from audit_entries e where e.org_id = o)::int as head
     from unnest($1::uuid[]) as o`,
    [orgIds],
  )) as { org_id: string; n: number; seqs: number; head: number }[];
  const wrong = rows.filter((r) => r.n !== expected || r.seqs !== expected || r.head !== expected);
  if (wrong.length > 0) {
    throw new Error(`Postgres rows differ from the appends: ${JSON.stringify(wrong.slice(0, 3))}`);
  }
}

/** The real Worker (with the OrgLedger class) and the benchmark driver bound to it. */
function newMiniflare(scripts: { main: string; driver: string }, endpoint: SqlEndpoint): Miniflare {
  return new Miniflare({
    log: new Log(LogLevel.WARN),
    cf: false, // no fetch of Request.cf data from the Internet
    workers: [
      {
        name: "main",
        modules: true,
        scriptPath: scripts.main,
        compatibilityDate: COMPATIBILITY_DATE,
        compatibilityFlags: ["nodejs_compat"],
        durableObjects: { ORG_LEDGER: { className: "OrgLedger", useSQLite: true } },
        // No Miniflare Worker copying each outbound request (the DO's writes) to strip a header
        // Cloudflare's edge strips natively (scripts/bench/assess-workerd.ts).
        stripCfConnectingIp: false,
        bindings: {
          DATABASE_URL: localDatabaseUrl(endpoint.url),
          LOCAL_SQL_ENDPOINT: "true",
          ENVIRONMENT: "development",
          SIGNING_KEY: JSON.stringify(ed25519Jwk().privateJwk),
          SIGNING_KEY_ES256: JSON.stringify(p256Jwk().privateJwk),
        },
      },
      {
        name: "driver",
        modules: true,
        scriptPath: scripts.driver,
        compatibilityDate: COMPATIBILITY_DATE,
        durableObjects: { ORG_LEDGER: { className: "OrgLedger", scriptName: "main" } },
      },
    ],
  });
}

// --- Running -------------------------------------------------------------------------------

interface LedgerStub {
  append(orgId: string, inputs: ReturnType<typeof benchInput>[]): Promise<unknown[]>;
}

interface LedgerNamespace {
  idFromName(name: string): unknown;
  get(id: unknown): LedgerStub;
}

interface Bench {
  options: Options;
  endpoint: SqlEndpoint;
  mf: Miniflare;
  wire: WireWatch;
  run: Run;
  cores: number;
}

async function driverPost(bench: Bench, path: string, body: object): Promise<unknown> {
  const driver = await bench.mf.getWorker("driver");
  const response = await driver.fetch(`http://bench${path}`, {
    method: "POST",
    body: JSON.stringify(body),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`driver ${path}: ${response.status} ${text}`);
  return JSON.parse(text);
}

function runBudget(bench: Bench): number {
  return Math.min(MAX_RUN_BUDGET_MS, bench.run.budgetMs());
}

async function appendAll(
  bench: Bench,
  orgIds: string[],
  perOrg: number,
  concurrency: number,
  proxy: boolean,
): Promise<PoolOutcome> {
  const budgetMs = runBudget(bench);
  let outcome: PoolOutcome;
  if (proxy) {
    const ns = (await bench.mf.getDurableObjectNamespace(
      "ORG_LEDGER",
      "main",
    )) as unknown as LedgerNamespace;
    // One stub per org: every proxy call is a Node -> workerd round trip, so do not add two more.
    const stubs = new Map(orgIds.map((id) => [id, ns.get(ns.idFromName(id))]));
    const jobs = interleavedJobs(orgIds, perOrg);
    outcome = await runPool(jobs, concurrency, budgetMs, (orgId, index) =>
      (stubs.get(orgId) as LedgerStub).append(orgId, [benchInput(index)]),
    );
  } else {
    outcome = (await driverPost(bench, "/append", {
      orgIds,
      perOrg,
      concurrency,
      budgetMs,
    })) as PoolOutcome;
  }
  if (outcome.failed > 0) throw new Error(`append failed: ${outcome.firstError}`);
  const expected = orgIds.length * perOrg;
  if (outcome.completed !== expected) {
    throw new Error(`only ${outcome.completed} of ${expected} appends within the time budget`);
  }
  return outcome;
}

async function runScenario(
  bench: Bench,
  scenario: Scenario,
  run: number,
  orgIds: string[],
): Promise<RunResult> {
  const { perOrg, concurrency, warmPerOrg } = scenario;
  const proxy = bench.options.driver === "proxy";
  await appendAll(bench, orgIds, warmPerOrg, concurrency, proxy);

  const statsBefore = bench.endpoint.stats();
  bench.wire.watch(orgIds);
  const cpuBefore = sampleCpu();
  const outcome = await appendAll(bench, orgIds, perOrg, concurrency, proxy);
  const cpu = cpuShare(cpuBefore, sampleCpu(), bench.cores);
  const wire = bench.wire.counts();
  const statsAfter = bench.endpoint.stats();

  // Outside the measurement: anchor now, so no alarm of these orgs fires during a later run.
  await driverPost(bench, "/anchor", { orgIds });
  if (!bench.options.nullDb) await verifyRows(bench.endpoint, orgIds, warmPerOrg + perOrg);

  const completed = outcome.completed;
  if (wire.entryRows !== completed) {
    throw new Error(`the endpoint saw ${wire.entryRows} entry rows for ${completed} appends`);
  }
  const requests = statsAfter.requests - statsBefore.requests;
  const sorted = [...outcome.latenciesMs].sort((a, b) => a - b);
  return {
    scenario,
    run,
    completed,
    appendsPerS: completed / (outcome.elapsedMs / 1000),
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    requests,
    rtPerAppend: requests / completed,
    batches: wire.entryWrites,
    rtPerBatch: (wire.requests - wire.checkpointOnly) / wire.entryWrites,
    avgBatch: wire.entryRows / wire.entryWrites,
    maxBatch: wire.maxRows,
    wire,
    cpu,
    endpointErrors: statsAfter.errors - statsBefore.errors,
  };
}

async function benchmark(options: Options, run: Run) {
  const cores = cpus().length;
  const databaseUrl = process.env.DATABASE_URL || undefined;
  const plan = scenarios(options);
  if (plan.length === 0) throw new Error("nothing to run: both scenarios are skipped");

  say(
    `machine: ${cores} × ${cpus()[0]?.model ?? "?"}, ${(totalmem() / 2 ** 30).toFixed(1)} GiB, ` +
      `load ${loadavg()
        .map((l) => l.toFixed(2))
        .join(" ")}`,
  );
  say(
    `software: Node ${process.versions.node}, miniflare ${version("miniflare")}, ` +
      `workerd ${version("workerd")}, driver ${options.driver === "worker" ? "in workerd" : "Node via Miniflare proxy"}`,
  );

  // Miniflare keeps the DOs' SQLite files in a temporary directory: its commits cost disk syncs
  // unless TMPDIR is a tmpfs (see docs/performance.md).
  say(`DO storage: Miniflare temp dir under ${tmpdir()} (${filesystemOf(tmpdir())})`);

  neonConfig.fetchEndpoint = (host, port) => `http://${host}:${port}/sql`;
  let endpoint: SqlEndpoint;
  if (options.nullDb) {
    endpoint = await run.started(startNullSqlEndpoint(), (started) => started.close());
    say(`database: none — every request answered at once, nothing stored, via ${endpoint.url}`);
  } else {
    endpoint = await run.started(
      startSqlEndpoint({ databaseUrl, fresh: true, migrationsFolder: join(REPO_ROOT, "drizzle") }),
      (started) => started.close(),
    );
    const owner = neon(localDatabaseUrl(endpoint.url, "owner"));
    const [server] = (await owner.query("select version() as v")) as { v: string }[];
    const name =
      endpoint.backend === "pglite"
        ? "PGlite (in memory, in this Node process)"
        : `PostgreSQL, fresh database on ${redactDatabaseUrl(databaseUrl ?? "")}`;
    say(`database: ${name} — ${server?.v.split(" ").slice(0, 2).join(" ")}, via ${endpoint.url}`);
  }

  const outDir = join(REPO_ROOT, ".bench", `ledger-${process.pid}`);
  mkdirSync(outDir, { recursive: true });
  const bundling = bundle(outDir);
  // Once esbuild is done with it: removed during a build, it would be written again.
  run.defer(async () => {
    await bundling.catch(() => undefined);
    rmSync(outDir, { recursive: true, force: true });
  });
  const scripts = await bundling;

  const wire = new WireWatch(endpoint.port);
  run.defer(() => wire.close());

  // Miniflare names its temp dir (the DOs' SQLite files) after os.tmpdir() when constructed and
  // removes it fire-and-forget on dispose(), which the exiting process cuts short: give it a
  // parent of ours on the same filesystem, and remove that ourselves.
  const mfTmp = mkdtempSync(join(tmpdir(), "bench-ledger-"));
  run.defer(() => rmSync(mfTmp, { recursive: true, force: true }));
  const previousTmp = process.env.TMPDIR;
  process.env.TMPDIR = mfTmp;
  let mf: Miniflare;
  try {
    // Without its exit hook, which would skip our cleanups on Ctrl-C: the harness disposes of it.
    mf = withoutSignalHooks(() => newMiniflare(scripts, endpoint));
  } finally {
    if (previousTmp === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = previousTmp;
  }
  run.defer(() => mf.dispose());
  await mf.ready;

  const bench: Bench = { options, endpoint, mf, wire, run, cores };
  const orgsPerRun = plan.reduce((sum, s) => sum + s.orgCount, 0);
  const orgCount = orgsPerRun * options.runs;
  const allOrgs = options.nullDb
    ? Array.from({ length: orgCount }, () => crypto.randomUUID())
    : await createOrgs(endpoint, orgCount);

  // Per-run rows print as they finish; wide enough for the labels and typical figures.
  const progressHeaders = ["scenario", "run", ...HEADERS.slice(1)];
  const progressWidths = widths(
    progressHeaders,
    [],
    [Math.max(...plan.map((s) => s.label.length)), 3, ...HEADERS.slice(1).map(() => 7)],
  );
  say(`\n${table(progressHeaders, [], progressWidths)}`);
  const results: RunResult[] = [];
  // Scenarios interleaved within each round, so slow phases of a noisy host spread over all.
  for (let run = 1; run <= options.runs; run++) {
    for (const scenario of plan) {
      const orgIds = allOrgs.splice(0, scenario.orgCount);
      const result = await runScenario(bench, scenario, run, orgIds);
      results.push(result);
      const [label = "", ...figures] = resultCells(scenario.label, [result]);
      say(line([label, String(run), ...figures], progressWidths));
      if (result.wire.other > 0 || result.wire.foreign > 0 || result.endpointErrors > 0) {
        say(
          `     note: ${result.wire.other} requests without ledger rows, ${result.wire.foreign} ` +
            `for other orgs, ${result.endpointErrors} endpoint errors`,
        );
      }
    }
  }

  say(`\nmedians of ${options.runs} run(s):\n`);
  say(
    table(
      HEADERS,
      plan.map((s) =>
        resultCells(
          s.label,
          results.filter((r) => r.scenario === s),
        ),
      ),
    ),
  );
  say(
    "\nrt = database round trips (endpoint HTTP requests); batches = requests that wrote " +
      "entries;\nrt/batch excludes checkpoint-only writes (ckpt = checkpoint writes by the " +
      "anchoring alarm);\nCPU in % of one core: node = endpoint" +
      `${endpoint.backend === "pglite" && !options.nullDb ? " + PGlite" : ""}, workerd = Worker + DOs, host = all processes.`,
  );

  // Judged at every single-org level from TARGET_CONCURRENCY up: a target met only with more in
  // flight would hide a sequencer that needs a crowd to batch well.
  const judged = plan.filter((s) => s.orgCount === 1 && s.concurrency >= TARGET_CONCURRENCY);
  const allOneTrip = results.every(
    (r) => Math.abs(r.rtPerBatch - 1) < 1e-9 && r.wire.other === 0 && r.endpointErrors === 0,
  );
  const trips = `${allOneTrip ? "exactly 1" : "MORE THAN 1"} round trip per flushed batch in every run`;
  if (options.nullDb) {
    say("\ntarget: not judged with --null-db (no database behind the endpoint)");
  } else if (judged.length > 0) {
    const rates = judged.map((s) => ({
      label: s.label,
      rate: median(results.filter((r) => r.scenario === s).map((r) => r.appendsPerS)) ?? 0,
    }));
    const met = allOneTrip && rates.every((r) => r.rate >= TARGET_APPENDS_PER_S);
    const figures = rates.map((r) => `${r.label}: ${r.rate.toFixed(0)}`).join(", ");
    say(
      `\ntarget (≥${TARGET_APPENDS_PER_S} appends/s for one org at C≥${TARGET_CONCURRENCY}, ` +
        `1 round trip per batch): ${met ? "MET" : "MISSED"} — ${figures} appends/s median; ${trips}`,
    );
  } else {
    say(
      `\nround trips per flushed batch: ${allOneTrip ? "exactly 1 in every run" : "MORE THAN 1"}`,
    );
  }
}

// --- Running -------------------------------------------------------------------------------

const options = optionsOrExit(() => parseOptions(process.argv.slice(2)), USAGE);
await runBench("bench:ledger", options.timeoutS, (run) => benchmark(options, run));
