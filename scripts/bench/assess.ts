/**
 * `npm run bench:assess [-- --requests 2000 --concurrency 16 --replays 2000]`
 *
 * Throughput, latency, database round trips and stage times of `POST /v1/assess` on the stack
 * `npm run dev` runs: the Worker under `wrangler dev` (the ledger Durable Object included)
 * against PostgreSQL behind the local SQL endpoint: PGlite in memory, or a fresh database on
 * the server named by DATABASE_URL (assess-stack.ts). An org with an agent, its key and
 * an active policy is set up through the API (assess-tenant.ts); the load is realistic
 * mandates, each distinct (assess-mandates.ts). Phases, each after an unmeasured warm-up,
 * all at the same concurrency:
 *
 *   1. `GET /health`: the stack's own ceiling, the denominator of the assess/health ratio;
 *   2. fresh assessments: `--requests` distinct mandates;
 *   3. replays: `--replays` of the bodies phase 2 sent, each answering the stored assessment;
 *   4. `GET /health` again, so a change in the machine's load shows.
 *
 * With `--shadow` the org also has a shadow policy (docs/shadow-policies.md): the round trips
 * must not change, every fresh assessment must record its shadow verdict, and the compute is
 * timed with and without it.
 *
 * Round trips come from the endpoint's counters (everything the Worker and the DO sent), stage
 * times from `Server-Timing`. Exits non-zero only when the benchmark cannot run; a missed
 * budget is printed. See docs/performance.md.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { cpus, loadavg, tmpdir, totalmem } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { type NeonQueryFunction, neon, neonConfig } from "@neondatabase/serverless";
import { redactDatabaseUrl } from "../database-url.ts";
import { REPO_ROOT } from "../dev-state.ts";
import { readDevVars } from "../dev-vars.ts";
import { localDatabaseUrl } from "../local-keys.ts";
import { type DelaySampler, describeDbRtt, parseDbRtt } from "../sql-endpoint/delay.ts";
import { measureCompute, measureModelInference } from "./assess-compute.ts";
import { cpuMsBetween, descendantCpuMs, workerCpuClock, workerSleeps } from "./assess-cpu.ts";
import { Client, type Reply } from "./assess-http.ts";
import { printLatencySweep, type RttLevel } from "./assess-latency.ts";
import { type AssessBody, assessBodies, withCredentials } from "./assess-mandates.ts";
import { setUpNetwork } from "./assess-network.ts";
import { startProfile } from "./assess-profile.ts";
import {
  CPU_WINDOW,
  type PhaseResult,
  parseServerTiming,
  printReport,
  type Stage,
} from "./assess-report.ts";
import {
  type PricedJob,
  type PricedPhases,
  priceEach,
  printRequestCpu,
} from "./assess-request-cpu.ts";
import { type Runtime, runtimeOf, type Stack, startStack } from "./assess-stack.ts";
import { POLICY_RULES, SHADOW_RULES, setUpTenant, type Tenant } from "./assess-tenant.ts";
import { TrafficWatch } from "./assess-wire.ts";
import { cpuShare, sampleCpu } from "./cpu.ts";
import { Draw } from "./draw.ts";
import { optionsOrExit, type Run, runBench } from "./harness.ts";
import { runPool } from "./pool.ts";

const say = (line: string) => process.stdout.write(`${line}\n`);

interface Options {
  requests: number;
  concurrency: number;
  replays: number;
  agents: number;
  /** Percent of the assess bodies that are AP2 credentials (3-hop ES256 chains). */
  credentialShare: number;
  /** Installs a shadow policy next to the active one. */
  shadow: boolean;
  /** The org consumes network signals, and other orgs contributed (assess-network.ts). */
  network: boolean;
  /** The artefacts every assess body asks for (`artifacts`, docs/rails.md); none by default. */
  artifacts: string[];
  /** `--db-rtt` values, one fresh and one replay phase each; the first also feeds the report. */
  dbRtts: string[];
  runtime: Runtime;
  timeoutS: number;
  /** Writes CPU profiles of the first level's fresh and replay phases here (plain workerd). */
  profileDir: string | null;
  /** Seeds the draws of the bodies (draw.ts): the same seed, the same mix of decisions. */
  seed: number;
  /** Requests of each kind (health, fresh, replay) priced one at a time, by kind and decision. */
  priced: number;
  /** The checkout whose Worker is measured (`--worker`); null for this one. */
  worker: string | null;
}

const USAGE = `usage: npm run bench:assess [-- options]
  --requests N     fresh assessments measured, and GET /health requests per health phase (default 2000)
  --concurrency C  requests in flight in every phase (default 16)
  --replays N      replays of already-assessed bodies measured (default: --requests)
  --agents N       agents acting for the org, each with its own key (default 1)
  --credentials P  percent of assess bodies that are AP2 credentials, 3-hop ES256 chains whose
                   last hop the first agent signs (default 25; 100 for credentials only)
  --shadow         also install a shadow policy (SHADOW_RULES), evaluated on every assessment
  --network        the org consumes network signals and three other orgs contributed about its
                   payees, agent keys and issuer key (assess-network.ts); without it the context
                   read still asks the network, which answers that the org does not consume
  --artifacts LIST every assess body asks for these artefacts (comma-separated: x402, acp), each
                   signed after the commit (docs/rails.md); what they add per request
  --db-rtt LIST    injected round trip per SQL request, one fresh and one replay phase per
                   value, comma-separated: MS, MEAN±SD (or MEAN+-SD, normal) or
                   uniform:LOW-HIGH (default 0,20,80; see docs/latency.md)
  --runtime R      workerd (default: plain workerd through Miniflare, the Worker's CPU alone) or
                   wrangler (wrangler dev, its proxy and inspector included, as npm run dev)
  --profile DIR    write CPU profiles of the first level's fresh and replay phases to DIR, taken
                   through workerd's inspector, and print where the samples fall (plain workerd;
                   Node 20 needs --experimental-websocket); the profiler's cost inflates the CPU
                   figures of that run
  --seed N         seed of the bodies' amounts, payees and options (default 1): runs with the
                   same seed send the same mix and reach the same decisions
  --priced N       GET /health, fresh assessments and replays, N of each, sent one at a time
                   at the end, each priced by workerd's CPU clock, by kind and decision
                   (default 300; 0 skips them)
  --worker DIR     build and measure the Worker of another checkout (a worktree of an earlier
                   commit: its src, wrangler.toml and migrations) with this benchmark's code,
                   for a before/after comparison; the pure stages are then not timed
  --timeout S      stop everything after S seconds (default 900)
DATABASE_URL=postgres://... selects a fresh database on that PostgreSQL server instead of PGlite.`;

function integer(name: string, value: string | undefined, fallback: number, min: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < min || n > 1_000_000) {
    throw new Error(`--${name} must be an integer from ${min} to 1000000, got ${value}`);
  }
  return n;
}

/** A checkout to build the Worker from: it must have what a build and its database need. */
export function workerCheckout(dir: string): string {
  const root = resolve(dir);
  for (const needed of ["wrangler.toml", "workers/main.ts", "drizzle/meta/_journal.json"]) {
    if (!existsSync(join(root, needed))) {
      throw new Error(`--worker ${dir}: ${needed} is missing; give the root of a checkout`);
    }
  }
  return root;
}

function parseOptions(argv: string[]): Options | null {
  const { values } = parseArgs({
    args: argv,
    options: {
      requests: { type: "string" },
      concurrency: { type: "string" },
      replays: { type: "string" },
      agents: { type: "string" },
      credentials: { type: "string" },
      "db-rtt": { type: "string" },
      runtime: { type: "string" },
      timeout: { type: "string" },
      shadow: { type: "boolean" },
      network: { type: "boolean" },
      artifacts: { type: "string" },
      profile: { type: "string" },
      seed: { type: "string" },
      priced: { type: "string" },
      worker: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
    strict: true,
  });
  if (values.help) return null;
  const requests = integer("requests", values.requests, 2000, 1);
  const dbRtts = (values["db-rtt"] ?? "0,20,80").split(",").map((v) => v.trim());
  for (const rtt of dbRtts) parseDbRtt(rtt); // throws, naming the accepted forms
  const runtime = runtimeOf(values.runtime);
  return {
    dbRtts,
    runtime,
    requests,
    concurrency: integer("concurrency", values.concurrency, 16, 1),
    replays: integer("replays", values.replays, requests, 1),
    agents: integer("agents", values.agents, 1, 1),
    credentialShare: Math.min(100, integer("credentials", values.credentials, 25, 0)),
    shadow: values.shadow === true,
    network: values.network === true,
    artifacts:
      values.artifacts === undefined ? [] : values.artifacts.split(",").map((v) => v.trim()),
    timeoutS: integer("timeout", values.timeout, 900, 10),
    profileDir: values.profile ?? null,
    seed: integer("seed", values.seed, 1, 0),
    priced: integer("priced", values.priced, 300, 0),
    worker: values.worker === undefined ? null : workerCheckout(values.worker),
  };
}

function version(pkg: string): string {
  try {
    const require = createRequire(join(REPO_ROOT, "package.json"));
    const path = require.resolve(`${pkg}/package.json`, {
      paths: [REPO_ROOT, require.resolve("miniflare")],
    });
    return (JSON.parse(readFileSync(path, "utf8")) as { version: string }).version;
  } catch {
    return "?";
  }
}

// --- Phases --------------------------------------------------------------------------------

interface Bench {
  options: Options;
  stack: Stack;
  client: Client;
  tenant: Tenant;
  traffic: TrafficWatch;
  run: Run;
  /** The owner's connection: reads the ledger's row count between phases. */
  owner: NeonQueryFunction<false, false>;
  /** workerd's nanosecond CPU clock (plain workerd only; null under wrangler dev). */
  clock: (() => number) | null;
  /** How often workerd's threads have gone to sleep (plain workerd only). */
  sleeps: (() => number) | null;
}

interface Job {
  /** The request body (none for GET /health). */
  body?: string;
  /** Checks one answer (throws on a wrong one); answers its decision, if any. */
  check(reply: Reply): string | null;
}

async function ledgerRows(bench: Bench): Promise<number> {
  const rows = (await bench.owner.query(
    "select count(*)::int as n from audit_entries where org_id = $1",
    [bench.tenant.orgId],
  )) as { n: number }[];
  return rows[0]?.n ?? 0;
}

/** Sends one job and checks its answer: a 200 the job accepts, or an error. */
async function sendJob(bench: Bench, job: Job): Promise<{ reply: Reply; decision: string | null }> {
  const reply = await bench.client.send(job.body === undefined ? "/health" : "/v1/assess", {
    method: job.body === undefined ? "GET" : "POST",
    body: job.body,
    headers: job.body === undefined ? {} : { "x-api-key": bench.tenant.apiKey },
  });
  if (reply.status !== 200) throw new Error(`${reply.status} ${reply.text.slice(0, 500)}`);
  return { reply, decision: job.check(reply) };
}

async function runPhase(bench: Bench, label: string, jobs: Job[]): Promise<PhaseResult> {
  const { stack, options } = bench;
  const budgetMs = bench.run.budgetMs();
  const timings: Map<Stage, number>[] = [];
  const latencies: number[] = [];
  const decisions = new Map<string, number>();
  const ledgerBefore = await ledgerRows(bench);
  const statsBefore = stack.endpoint.stats();
  bench.traffic.take();
  const cpuBefore = sampleCpu();
  const address = stack.runtime === "wrangler" ? new URL(stack.origin).host : null;
  const cpuMsBefore = descendantCpuMs(address);

  // workerd's CPU read every CPU_WINDOW answers: the phase's CPU per request window by window.
  const marks = bench.clock ? [bench.clock()] : [];
  const sleepsBefore = bench.sleeps?.() ?? 0;
  const ids = jobs.map((_, i) => String(i));
  const outcome = await runPool(ids, options.concurrency, budgetMs, async (_, index) => {
    const job = jobs[index] as Job;
    const began = performance.now();
    const { reply, decision } = await sendJob(bench, job);
    latencies.push(performance.now() - began);
    if (bench.clock && latencies.length % CPU_WINDOW === 0) marks.push(bench.clock());
    if (decision !== null) decisions.set(decision, (decisions.get(decision) ?? 0) + 1);
    if (reply.headers["server-timing"])
      timings.push(parseServerTiming(reply.headers["server-timing"]));
  });

  const sleeps = bench.sleeps ? bench.sleeps() - sleepsBefore : null;
  const cpu = cpuShare(cpuBefore, sampleCpu(), cpus().length);
  const cpuMs = cpuMsBetween(cpuMsBefore, descendantCpuMs(address));
  const traffic = bench.traffic.take();
  const statsAfter = stack.endpoint.stats();
  if (outcome.failed > 0) throw new Error(`${label}: a request failed: ${outcome.firstError}`);
  if (outcome.completed < jobs.length) {
    throw new Error(`${label}: only ${outcome.completed} of ${jobs.length} requests in time`);
  }
  const stats = {
    requests: statsAfter.requests - statsBefore.requests,
    statements: statsAfter.statements - statsBefore.statements,
    batches: statsAfter.batches - statsBefore.batches,
    errors: statsAfter.errors - statsBefore.errors,
    bytesIn: statsAfter.bytesIn - statsBefore.bytesIn,
    bytesOut: statsAfter.bytesOut - statsBefore.bytesOut,
  };
  const ledgerEntries = (await ledgerRows(bench)) - ledgerBefore;
  return {
    label,
    completed: outcome.completed,
    elapsedMs: outcome.elapsedMs,
    latencies,
    timings,
    stats,
    traffic,
    cpu,
    cpuMs,
    ledgerEntries,
    decisions,
    sleepsPerRequest: sleeps === null ? null : sleeps / outcome.completed,
    windowCpuMs: marks.slice(1).map((ns, i) => (ns - (marks[i] as number)) / 1e6 / CPU_WINDOW),
  };
}

function healthJobs(count: number): Job[] {
  return Array.from({ length: count }, () => ({ check: () => null }));
}

interface Assessed {
  assessmentId: string;
  decision: string;
}

function assessedOf(reply: Reply): Assessed {
  const body = JSON.parse(reply.text) as Partial<Assessed>;
  if (typeof body.assessmentId !== "string" || typeof body.decision !== "string") {
    throw new Error(`an answer without assessmentId or decision: ${reply.text.slice(0, 300)}`);
  }
  return { assessmentId: body.assessmentId, decision: body.decision };
}

/** Fresh assessments: each must be new; the ids are kept for the replays. */
function freshJobs(bodies: AssessBody[], seen: Set<string>, ids: string[]): Job[] {
  return bodies.map((b, i) => ({
    body: b.body,
    check: (reply) => {
      const { assessmentId, decision } = assessedOf(reply);
      if (seen.has(assessmentId)) throw new Error(`a fresh mandate answered ${assessmentId} again`);
      seen.add(assessmentId);
      ids[i] = assessmentId;
      return `${b.kind}/${decision}`;
    },
  }));
}

/** The bodies, each asking for the artefacts named (none: the bodies as they are). */
function askingFor(artifacts: string[], bodies: AssessBody[]): AssessBody[] {
  if (artifacts.length === 0) return bodies;
  return bodies.map((b) => ({ ...b, body: JSON.stringify({ ...JSON.parse(b.body), artifacts }) }));
}

/** Replays, cycling over the given bodies: each must answer its original assessment. */
function replayJobs(bodies: AssessBody[], ids: string[], count: number): Job[] {
  return Array.from({ length: count }, (_, n) => {
    const i = n % bodies.length;
    return {
      body: (bodies[i] as AssessBody).body,
      check: (reply) => {
        const { assessmentId } = assessedOf(reply);
        if (assessmentId !== ids[i]) {
          throw new Error(`a replay answered ${assessmentId}, not ${ids[i]}`);
        }
        return null;
      },
    };
  });
}

async function benchmark(options: Options, run: Run) {
  const databaseUrl = process.env.DATABASE_URL || undefined;
  const load = () =>
    loadavg()
      .map((l) => l.toFixed(2))
      .join(" ");
  say(
    `machine: ${cpus().length} × ${cpus()[0]?.model ?? "?"}, ` +
      `${(totalmem() / 2 ** 30).toFixed(1)} GiB, load ${load()}`,
  );
  say(
    `software: Node ${process.versions.node}, wrangler ${version("wrangler")}, ` +
      `workerd ${version("workerd")}`,
  );

  const workDir = mkdtempSync(join(tmpdir(), "bench-assess-"));
  run.defer(() => rmSync(workDir, { recursive: true, force: true }));
  neonConfig.fetchEndpoint = (host, port) => `http://${host}:${port}/sql`;
  // The endpoint reads the current level's sampler per request, so one stack serves every level.
  let delay: DelaySampler = parseDbRtt(options.dbRtts[0] ?? "0");
  const stack = await startStack({
    databaseUrl,
    workDir,
    run,
    log: say,
    runtime: options.runtime,
    dbRtt: () => delay(),
    profile: options.profileDir !== null,
    ...(options.worker === null ? {} : { workerRoot: options.worker }),
  });
  const owner = neon(localDatabaseUrl(stack.endpoint.url, "owner"));
  const [server] = (await owner.query("select version() as v")) as { v: string }[];
  say(
    `database: ${
      stack.endpoint.backend === "pglite"
        ? "PGlite (in memory, in this Node process)"
        : `PostgreSQL, fresh database on ${redactDatabaseUrl(databaseUrl ?? "")}`
    } — ${server?.v.split(" ").slice(0, 2).join(" ")}, via ${stack.endpoint.url}`,
  );
  say(
    stack.runtime === "wrangler"
      ? `worker: the \`wrangler deploy --dry-run\` build under \`wrangler dev --no-bundle\` at ` +
          `${stack.origin}; DO storage under ${workDir}`
      : `worker: the \`wrangler deploy --dry-run\` build under plain workerd (Miniflare) at ` +
          `${stack.origin}; no proxy, no inspector`,
  );
  if (options.worker !== null) say(`worker built from: ${options.worker} (--worker)`);

  const client = new Client(stack.origin, options.concurrency);
  run.defer(() => client.close());
  const tenant = await setUpTenant(client, stack.idp, options.agents, options.shadow);
  say(
    `tenant: org ${tenant.orgId}, ${tenant.agents.length} agent(s) with a P-256 key each, ` +
      `active policy ${JSON.stringify(POLICY_RULES)}` +
      (options.shadow ? `, shadow policy ${JSON.stringify(SHADOW_RULES)}` : ", no shadow policy"),
  );
  if (options.network) {
    const keys = readDevVars(join(workDir, ".dev.vars"))?.get("NETWORK_KEYS") ?? "";
    say(await setUpNetwork(owner, tenant, keys));
  }
  const traffic = new TrafficWatch(stack.endpoint.port);
  run.defer(() => traffic.close());
  const plain = stack.runtime === "workerd";
  const clock = plain ? workerCpuClock(null) : null;
  const sleeps = plain ? workerSleeps(null) : null;
  const bench: Bench = { options, stack, client, tenant, traffic, run, owner, clock, sleeps };

  const { requests, replays, concurrency } = options;
  const warm = Math.min(200, Math.max(20, Math.ceil(requests / 10)));
  say(
    `load: C=${concurrency}; ${requests} GET /health twice; at each --db-rtt ` +
      `(${options.dbRtts.join(", ")}): ${requests} fresh assessments, ${replays} replays; ` +
      `warm-ups: ${warm} health, ${warm} fresh, ${Math.min(warm, 100)} replays`,
  );
  const seen = new Set<string>();
  const progress = (r: PhaseResult) =>
    say(`  ${r.label}: ${r.completed} in ${(r.elapsedMs / 1000).toFixed(1)} s`);

  await runPhase(bench, "warm-up health", healthJobs(warm));
  const healthBefore = await runPhase(bench, "GET /health (before)", healthJobs(requests));
  progress(healthBefore);

  const share = options.credentialShare;
  const draw = new Draw(options.seed);
  const levels: RttLevel[] = [];
  for (const [n, rtt] of options.dbRtts.entries()) {
    delay = parseDbRtt(rtt);
    const tag = `db-rtt ${describeDbRtt(rtt)}`;
    const warmBodies = await withCredentials(
      draw,
      assessBodies(draw, warm, tenant.agents),
      tenant.consent,
      share,
    );
    const warmIds: string[] = [];
    await runPhase(bench, `warm-up fresh, ${tag}`, freshJobs(warmBodies, seen, warmIds));
    const bodies = askingFor(
      options.artifacts,
      await withCredentials(
        draw,
        assessBodies(draw, requests, tenant.agents),
        tenant.consent,
        share,
      ),
    );
    const ids: string[] = [];
    const freshProfile = n === 0 ? await profiling(bench, "fresh") : null;
    const fresh = await runPhase(bench, `assess, fresh, ${tag}`, freshJobs(bodies, seen, ids));
    progress(fresh);
    if (freshProfile) say(await freshProfile.stop());
    await runPhase(
      bench,
      `warm-up replay, ${tag}`,
      replayJobs(warmBodies, warmIds, Math.min(warm, 100)),
    );
    const replayProfile = n === 0 ? await profiling(bench, "replay") : null;
    const replay = await runPhase(
      bench,
      `assess, replay, ${tag}`,
      replayJobs(bodies, ids, replays),
    );
    progress(replay);
    if (replayProfile) say(await replayProfile.stop());
    levels.push({ rtt, fresh, replay, first: n === 0 });
  }
  delay = parseDbRtt("0");

  const healthAfter = await runPhase(bench, "GET /health (after)", healthJobs(requests));
  progress(healthAfter);
  const priced = await priceOneAtATime(bench, draw, seen);
  const first = levels[0] as RttLevel;
  const fresh = first.fresh;
  const replay = first.replay;

  // Another checkout's Worker: this checkout's stages are not the ones measured.
  const timed = options.worker === null;
  if (timed) say("timing the pure stages in Node …");
  const compute = timed ? await measureCompute() : null;
  const credentialCompute = timed ? await measureCompute(5000, "credential") : undefined;
  const shadowCompute = timed && options.shadow ? await measureCompute(5000, "shadow") : undefined;
  const modelCompute = timed ? await measureCompute(5000, "model") : undefined;
  const modelInference = timed ? measureModelInference() : undefined;
  if (options.shadow) await expectShadowed(bench, seen.size);
  say(`\nthe detailed report is of the first --db-rtt level (${describeDbRtt(first.rtt)}):`);
  printReport({
    healthBefore,
    fresh,
    replay,
    healthAfter,
    compute,
    credentialCompute,
    shadowCompute,
    modelCompute,
    modelInference,
  });
  printLatencySweep({ levels, healthBefore, healthAfter, runtime: stack.runtime });
  if (priced) printRequestCpu(priced);
  say(`\nload average at the end: ${load()}`);
}

/**
 * `--priced` requests of each kind, one at a time at `--db-rtt` 0, each priced by workerd's
 * CPU clock (assess-request-cpu.ts), a fresh one under its `kind/decision`. Null when there is
 * nothing to price with (`--priced 0`, wrangler dev, whose inspector adds CPU per fetch, or no
 * procfs).
 */
async function priceOneAtATime(
  bench: Bench,
  draw: Draw,
  seen: Set<string>,
): Promise<PricedPhases | null> {
  const { options, tenant, clock } = bench;
  if (clock === null || options.priced === 0) return null;
  const n = options.priced;
  const bodies = askingFor(
    options.artifacts,
    await withCredentials(
      draw,
      assessBodies(draw, n, tenant.agents),
      tenant.consent,
      options.credentialShare,
    ),
  );
  const ids: string[] = [];
  // Named by the answer's `kind/decision` when the job reads one, else by `name`.
  const asPriced = (jobs: Job[], name: string): PricedJob[] =>
    jobs.map((job) => ({ send: async () => (await sendJob(bench, job)).decision ?? name }));
  const deadline = performance.now() + bench.run.budgetMs();
  say(`pricing ${n} requests of each kind one at a time …`);
  const health = await priceEach(clock, asPriced(healthJobs(n), "health"), deadline);
  const fresh = await priceEach(clock, asPriced(freshJobs(bodies, seen, ids), "fresh"), deadline);
  const replayed = bodies.slice(0, fresh.length);
  const replay = await priceEach(
    clock,
    asPriced(replayJobs(replayed, ids, replayed.length), "replay"),
    deadline,
  );
  return { health, fresh, replay };
}

/** A profile of the next phase when `--profile` asked for one. */
async function profiling(bench: Bench, label: string) {
  const { profileDir } = bench.options;
  const port = bench.stack.inspectorPort;
  if (profileDir === null) return null;
  if (port === undefined) throw new Error("--profile needs --runtime workerd");
  mkdirSync(profileDir, { recursive: true });
  return await startProfile(port, bench.stack.script, profileDir, label);
}

/** Every fresh assessment recorded its shadow verdict, or the shadow figures mean nothing. */
async function expectShadowed(bench: Bench, fresh: number): Promise<void> {
  const rows = (await bench.owner.query(
    "select count(*)::int as n from assessments where org_id = $1 and shadow is not null",
    [bench.tenant.orgId],
  )) as { n: number }[];
  const shadowed = rows[0]?.n ?? 0;
  if (shadowed !== fresh) throw new Error(`${shadowed} of ${fresh} assessments were shadowed`);
  say(`shadow: all ${shadowed} fresh assessments recorded the shadow policy's verdict`);
}

// --- Running -------------------------------------------------------------------------------

const options = optionsOrExit(() => parseOptions(process.argv.slice(2)), USAGE);
await runBench("bench:assess", options.timeoutS, (run) => benchmark(options, run));
