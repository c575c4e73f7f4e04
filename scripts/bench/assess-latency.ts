/**
 * The latency sweep of `npm run bench:assess`: for each injected database round trip
 * (`--db-rtt`), what a fresh assessment and a replay wait for, how many database round trips
 * and Durable Object calls each sends, how many of those it waits for in turn (the critical
 * path), and the Worker's CPU per request. docs/latency.md turns these into a model by region.
 */
import { describeDbRtt, meanDbRtt } from "../sql-endpoint/delay.ts";
import type { Role } from "./assess-cpu.ts";
import { CPU_WINDOW, type PhaseResult, percentile } from "./assess-report.ts";
import type { Runtime } from "./assess-stack.ts";

export interface RttLevel {
  rtt: string;
  fresh: PhaseResult;
  replay: PhaseResult;
  /** The level every other one is compared with (the first of `--db-rtt`). */
  first: boolean;
}

/** The CPU budgets above a `GET /health` (docs/latency.md, issue 21). */
export const CPU_BUDGET_MS = { fresh: 2, replay: 1 };

const say = (line: string) => process.stdout.write(`${line}\n`);

/** The share of a fresh phase's answers that were `review`, as a percentage. */
function reviewShare(phase: PhaseResult): string {
  let reviews = 0;
  for (const [key, n] of phase.decisions) if (key.endsWith("/review")) reviews += n;
  return phase.completed > 0 ? `${((100 * reviews) / phase.completed).toFixed(0)}%` : "-";
}

function fixed(value: number, digits: number): string {
  return Number.isFinite(value) ? value.toFixed(digits) : "-";
}

function table(headers: string[], rows: string[][]): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === 0 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0)))
      .join("  ");
  return [line(headers), widths.map((w) => "-".repeat(w)).join("  "), ...rows.map(line)].join("\n");
}

const p50 = (r: PhaseResult) => percentile(r.latencies, 50);
const p99 = (r: PhaseResult) => percentile(r.latencies, 99);
const cpuMs = (r: PhaseResult, role: Role) => (r.cpuMs.get(role) ?? 0) / r.completed;

/**
 * Database round trips one request waits for in turn, from the slope of its p50 against the
 * injected round trip: every sequential wait adds the whole delay, a parallel or amortized one
 * less. Null at the reference level.
 */
export function sequentialTrips(
  phase: (l: RttLevel) => PhaseResult,
  level: RttLevel,
  reference: RttLevel,
): number | null {
  const span = meanDbRtt(level.rtt) - meanDbRtt(reference.rtt);
  if (level === reference || span <= 0) return null;
  return (p50(phase(level)) - p50(phase(reference))) / span;
}

export function printLatencySweep(input: {
  levels: RttLevel[];
  healthBefore: PhaseResult;
  healthAfter: PhaseResult;
  runtime: Runtime;
}): void {
  const { levels, healthBefore, healthAfter, runtime } = input;
  const reference = levels[0];
  if (!reference) return;
  say("\nlatency by injected database round trip (the SQL endpoint's --db-rtt):\n");
  const seq = (phase: (l: RttLevel) => PhaseResult, level: RttLevel) => {
    const trips = sequentialTrips(phase, level, reference);
    return trips === null ? "ref" : fixed(trips, 2);
  };
  say(
    table(
      [
        "db-rtt",
        "fresh p50",
        "fresh p99",
        "replay p50",
        "replay p99",
        "rt/fresh",
        "stmts/fresh",
        "DO calls/fresh",
        "seq. rt fresh",
        "rt/replay",
        "DO calls/replay",
        "seq. rt replay",
      ],
      levels.map((l) => [
        describeDbRtt(l.rtt),
        fixed(p50(l.fresh), 1),
        fixed(p99(l.fresh), 1),
        fixed(p50(l.replay), 1),
        fixed(p99(l.replay), 1),
        fixed(l.fresh.stats.requests / l.fresh.completed, 3),
        fixed(l.fresh.stats.statements / l.fresh.completed, 2),
        fixed(l.fresh.ledgerEntries / l.fresh.completed, 3),
        seq((x) => x.fresh, l),
        fixed(l.replay.stats.requests / l.replay.completed, 3),
        fixed(l.replay.ledgerEntries / l.replay.completed, 3),
        seq((x) => x.replay, l),
      ]),
    ),
  );
  say(
    [
      "ms; rt = SQL requests sent per request (the ledger DO's group-commit writes and alarm",
      "included); DO calls = ledger appends per request (a Durable Object call shows only by what",
      "it appends); seq. rt = (p50 − reference p50) / (mean db-rtt − reference db-rtt): the",
      "database round trips one request waits for in turn. The Worker → Durable Object hop is",
      "counted, not delayed: workerd runs both in one process and offers no hook to delay a stub",
      "call without changing the Worker (docs/latency.md adds it in the model).",
      "",
      "critical path, by the code: fresh = context read (DB, authenticates) → commitAssessment",
      "(DO) → the DO's group-commit write (DB; an assessment arriving while a write is in flight",
      "waits for it, then goes in the next); replay = context read (DB).",
    ].join("\n"),
  );

  const health = (cpuMs(healthBefore, "worker") + cpuMs(healthAfter, "worker")) / 2;
  say(`\nWorker CPU per request (${runtime === "workerd" ? "plain workerd" : "wrangler dev"}):`);
  say(
    `  GET /health ${fixed(health, 3)} ms (mean of both health phases: ` +
      `${fixed(cpuMs(healthBefore, "worker"), 3)}, ${fixed(cpuMs(healthAfter, "worker"), 3)})`,
  );
  for (const l of levels) {
    const fresh = cpuMs(l.fresh, "worker") - health;
    const replay = cpuMs(l.replay, "worker") - health;
    const verdict =
      runtime === "workerd"
        ? ` — fresh ${fresh <= CPU_BUDGET_MS.fresh ? "PASS" : "FAIL"} (≤ ${CPU_BUDGET_MS.fresh}), ` +
          `replay ${replay <= CPU_BUDGET_MS.replay ? "PASS" : "FAIL"} (≤ ${CPU_BUDGET_MS.replay})`
        : " — not judged: wrangler dev's inspector adds CPU per outbound fetch";
    say(
      `  db-rtt ${describeDbRtt(l.rtt)}: fresh ${fixed(cpuMs(l.fresh, "worker"), 3)} ms ` +
        `(${fixed(fresh, 3)} above health, ${reviewShare(l.fresh)} reviews), replay ` +
        `${fixed(cpuMs(l.replay, "worker"), 3)} ms (${fixed(replay, 3)} above health)${verdict}`,
    );
  }
  say(
    [
      "  (workerd's process CPU time from /proc, user + system, over the phase, divided by its",
      "  requests: the Worker and its Durable Object together, a mean per request, not a p50;",
      "  /proc counts in 10 ms ticks, so a phase needs thousands of ms of CPU to resolve it;",
      "  with the same --seed, runs send the same mix; the CPU of each kind and decision, one",
      "  request at a time, is priced below)",
    ].join("\n"),
  );
  if (runtime === "workerd") printTypicalCpu(levels, healthBefore, healthAfter);
}

/**
 * The same phases read window by window (`windowCpuMs`): the median window is a typical
 * request (the budget's "at p50"), which the rare costly moments of a phase (a collection, the
 * ledger's checkpoint, a neighbour on the machine) do not move as they move the mean.
 */
function printTypicalCpu(
  levels: readonly RttLevel[],
  healthBefore: PhaseResult,
  healthAfter: PhaseResult,
): void {
  const median = (r: PhaseResult) => percentile(r.windowCpuMs, 50);
  const health = percentile([...healthBefore.windowCpuMs, ...healthAfter.windowCpuMs], 50);
  say(
    `\nWorker CPU per request, the median of ${CPU_WINDOW}-answer windows (workerd's thread ` +
      `clock):\n  GET /health ${fixed(health, 3)} ms (both health phases' windows)`,
  );
  for (const l of levels) {
    const fresh = median(l.fresh) - health;
    const replay = median(l.replay) - health;
    say(
      `  db-rtt ${describeDbRtt(l.rtt)}: fresh ${fixed(median(l.fresh), 3)} ms ` +
        `(${fixed(fresh, 3)} above health; windows ${spread(l.fresh)}; ${sleeps(l.fresh)}), ` +
        `replay ${fixed(median(l.replay), 3)} ms (${fixed(replay, 3)} above health; windows ` +
        `${spread(l.replay)}; ${sleeps(l.replay)})`,
    );
  }
  say(
    "  (the budgets are judged on the means above; a median near its mean says the mean is a\n" +
      "  typical request's cost, not one raised by a few costly ones; sleeps = times workerd's\n" +
      `  threads went idle per request, ${sleeps(healthBefore)} for GET /health: each costs a ` +
      "wake-up, and\n  a database that answers one transaction at a time, as PGlite does, " +
      "wakes workerd once per answer)",
  );
}

function sleeps(r: PhaseResult): string {
  return `${fixed(r.sleepsPerRequest ?? Number.NaN, 2)} sleeps`;
}

/** The middle half of a phase's windows, p25–p75. */
function spread(r: PhaseResult): string {
  return `${fixed(percentile(r.windowCpuMs, 25), 2)}–${fixed(percentile(r.windowCpuMs, 75), 2)}`;
}
