/**
 * The Worker's CPU per request, priced one request at a time, by kind and decision. The phases
 * at C=16 can only divide a phase's CPU by its requests: a mean over the mix, which says
 * nothing of what a credential, a review or a replay costs on its own. Here each request gets
 * its own figure.
 *
 * How: with nothing else in flight, the workerd's thread clock (`workerCpuClock`, nanoseconds)
 * is read once workerd is quiet, the request is sent and answered, and the clock is read again
 * once workerd is quiet once more. "Quiet" waits out what a request leaves running after its
 * answer (the Durable Object's write, `waitUntil` work), so that work is the request's.
 *
 * These figures are higher than the C=16 means, for every kind, `GET /health` included: a
 * request that finds workerd idle pays alone for waking it (the event loop, the isolate's
 * lock), which requests in flight together share; and one at a time, the ledger object's group
 * commit carries one assessment per Postgres write instead of several. Compare kinds within one
 * table, not this table with the C=16 figures.
 */
import { percentile } from "./assess-report.ts";

/** A request to price: sends it, checks the answer, and names what it was (kind/decision). */
export interface PricedJob {
  send(): Promise<string>;
}

export interface Priced {
  kind: string;
  /** Microseconds of workerd CPU, every thread. */
  cpuUs: number;
}

/** Quiet: under 30 µs of CPU in a 2 ms window (idle workerd uses about 2 µs per ms). */
const QUIET_WINDOW_MS = 2;
const QUIET_NS = 30_000;
/** A request's trailing work is waited for at most this long; past it, it counts as is. */
const SETTLE_LIMIT_MS = 200;

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The clock's reading at the start of the first quiet window. */
async function quiet(clock: () => number): Promise<number> {
  const began = performance.now();
  let before = clock();
  for (;;) {
    await pause(QUIET_WINDOW_MS);
    const after = clock();
    if (after - before < QUIET_NS || performance.now() - began > SETTLE_LIMIT_MS) return before;
    before = after;
  }
}

/** Prices `jobs` in order, one at a time; stops early, with what it has, at `deadline` (ms). */
export async function priceEach(
  clock: () => number,
  jobs: PricedJob[],
  deadline: number,
): Promise<Priced[]> {
  const priced: Priced[] = [];
  for (const job of jobs) {
    if (performance.now() > deadline) break;
    const start = await quiet(clock);
    const kind = await job.send();
    const end = await quiet(clock);
    priced.push({ kind, cpuUs: (end - start) / 1000 });
  }
  return priced;
}

export interface CpuFigures {
  count: number;
  p50: number;
  p90: number;
  mean: number;
}

/** Milliseconds. */
export function figuresOf(priced: Priced[]): CpuFigures {
  const ms = priced.map((p) => p.cpuUs / 1000);
  return {
    count: ms.length,
    p50: percentile(ms, 50),
    p90: percentile(ms, 90),
    mean: ms.length > 0 ? ms.reduce((a, b) => a + b, 0) / ms.length : Number.NaN,
  };
}

/** The figures of each kind, by name. */
export function byKind(priced: Priced[]): Map<string, CpuFigures> {
  const kinds = new Map<string, Priced[]>();
  for (const p of priced) {
    const list = kinds.get(p.kind) ?? [];
    list.push(p);
    kinds.set(p.kind, list);
  }
  return new Map(
    [...kinds]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([kind, list]) => [kind, figuresOf(list)]),
  );
}

export interface PricedPhases {
  health: Priced[];
  /** Each named `kind/decision`. */
  fresh: Priced[];
  replay: Priced[];
}

const say = (line: string) => process.stdout.write(`${line}\n`);
const ms = (value: number) => (Number.isFinite(value) ? value.toFixed(3) : "-");

export function printRequestCpu({ health, fresh, replay }: PricedPhases): void {
  const rows: [string, CpuFigures][] = [
    ["GET /health", figuresOf(health)],
    ["fresh assessment", figuresOf(fresh)],
    ...[...byKind(fresh)].map(([kind, f]): [string, CpuFigures] => [`  ${kind}`, f]),
    ["replay", figuresOf(replay)],
  ];
  const width = Math.max(...rows.map(([label]) => label.length));
  say("\nWorker CPU per request, one at a time at db-rtt 0 (workerd's thread clock), ms:");
  say(`  ${"".padEnd(width)}  requests     p50     p90    mean`);
  for (const [label, f] of rows) {
    say(
      `  ${label.padEnd(width)}  ${String(f.count).padStart(8)}  ${ms(f.p50).padStart(6)}  ` +
        `${ms(f.p90).padStart(6)}  ${ms(f.mean).padStart(6)}`,
    );
  }
  say(
    [
      "  (every workerd thread's CPU from a quiet workerd to a quiet workerd around one request;",
      "  higher than the C=16 means for every kind, since a request that finds workerd idle pays",
      "  alone for waking it, and a fresh one for a Postgres write of its own: compare kinds",
      "  here, not this table with the one above)",
    ].join("\n"),
  );
}
