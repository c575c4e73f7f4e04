/**
 * How every benchmark runs and stops: its options or its usage, a hard time limit, signals,
 * and cleanups (Miniflare or wrangler dev, the SQL endpoint and its fresh PostgreSQL database,
 * temporary directories) that run newest first, each exactly once, however the run ends.
 *
 *   const options = optionsOrExit(() => parseOptions(process.argv.slice(2)), USAGE);
 *   await runBench("bench:x", options.timeoutS, async (run) => {
 *     const dir = mkdtempSync(…);
 *     run.defer(() => rmSync(dir, { recursive: true, force: true }));
 *     const endpoint = await run.started(startSqlEndpoint(…), (e) => e.close());
 *     … runPool(jobs, c, run.budgetMs(), …) …
 *   });
 *
 * Exit codes, the same for every bench: 0 done; 1 failed (or a cleanup failed); 2 bad options;
 * 124 the hard time limit (`--timeout`); 128 + n on signal n (129 SIGHUP, 130 SIGINT, 143
 * SIGTERM). Run them as `exec node --import tsx …` (see package.json and scripts/dev.ts): the
 * `tsx` CLI SIGKILLs a child that is slow to acknowledge a signal, skipping every cleanup.
 */
import { setTimeout as sleep } from "node:timers/promises";

export const EXIT = {
  done: 0,
  failed: 1,
  usage: 2,
  timedOut: 124,
} as const;

const SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"] as const;
type StopSignal = (typeof SIGNALS)[number];
const SIGNAL_NUMBERS: Record<StopSignal, number> = { SIGHUP: 1, SIGINT: 2, SIGTERM: 15 };

/** How long one cleanup may take before the next one starts. */
const CLEANUP_LIMIT_MS = 10_000;
/** Kept free before the hard limit for the cleanups: `budgetMs` never hands it out. */
const CLEANUP_RESERVE_MS = 15_000;
/** A repeated signal within this window is the same stop (npm relays the terminal's Ctrl-C). */
const REPEAT_SIGNAL_GRACE_MS = 3_000;

/** What a benchmark's body gets from `runBench`. */
export interface Run {
  /** When the hard time limit stops the run (`Date.now()` scale). */
  readonly deadline: number;
  /**
   * Aborted (with `Stopped`) as soon as the run is stopping: a signal, the time limit, or the
   * body's end. Hand it to what starts processes or waits long, so a stop ends them.
   */
  readonly signal: AbortSignal;
  /**
   * Registers a cleanup. Cleanups run newest first, one at a time, each once, when the run ends
   * for any reason. Registered once the run is stopping, it runs straight away and `defer`
   * throws `Stopped`, so a body still setting up does not go on.
   */
  defer(cleanup: () => unknown): void;
  /**
   * For something still starting (a database being created and migrated): registers its
   * cleanup now, so a stop before it has started waits for it and then cleans it up.
   * Answers what `starting` does, or throws `Stopped` if the run stopped meanwhile.
   */
  started<T>(starting: Promise<T>, cleanup: (value: T) => unknown): Promise<T>;
  /**
   * The time one measured stretch may take: up to the hard limit, minus what the cleanups
   * need. Throws once nothing is left.
   */
  budgetMs(): number;
}

/** Thrown by `Run.defer` once the run is stopping. */
export class Stopped extends Error {}

const describe = (error: unknown) =>
  error instanceof Error ? (error.stack ?? error.message) : String(error);
const warn = (line: string) => process.stderr.write(`${line}\n`);

/**
 * The parsed options, or the end of the process: `parse` answering null (for `--help`) prints
 * `usage` and exits 0; `parse` throwing prints its message and `usage`, and exits 2.
 */
export function optionsOrExit<T>(parse: () => T | null, usage: string): T {
  let options: T | null;
  try {
    options = parse();
  } catch (error) {
    warn(`${error instanceof Error ? error.message : String(error)}\n${usage}`);
    process.exit(EXIT.usage);
  }
  if (options === null) {
    process.stdout.write(`${usage}\n`);
    process.exit(EXIT.done);
  }
  return options;
}

/**
 * Calls `create`, then removes the SIGINT/SIGTERM/SIGHUP listeners it added. Miniflare's exit
 * hook answers those signals with an immediate `process.exit()`, which would skip the cleanups
 * (the SQL endpoint's close, and with it the drop of a fresh database); `runBench` disposes of
 * Miniflare itself, in order, once the cleanup is registered with `defer`.
 */
export function withoutSignalHooks<T>(create: () => T): T {
  const before = SIGNALS.map((signal) => process.listeners(signal));
  try {
    return create();
  } finally {
    SIGNALS.forEach((signal, i) => {
      for (const listener of process.listeners(signal)) {
        if (!before[i]?.includes(listener)) process.off(signal, listener);
      }
    });
  }
}

type Ending =
  | { kind: "done" }
  | { kind: "failed"; error: unknown }
  | { kind: "signal"; signal: StopSignal }
  | { kind: "timeout" };

/**
 * Runs a benchmark's body under a hard time limit of `timeoutS` seconds, answering SIGINT,
 * SIGTERM and SIGHUP, then runs its cleanups and exits the process with the code of how it
 * ended (see EXIT). Never returns: a run cut short may leave sockets or timers behind.
 */
export async function runBench(
  name: string,
  timeoutS: number,
  body: (run: Run) => Promise<void>,
): Promise<never> {
  const deadline = Date.now() + timeoutS * 1000;
  const aborter = new AbortController();
  const cleanups: (() => unknown)[] = [];
  let cleanupFailed = false;
  let stoppingSince: number | undefined;

  let end: (ending: Ending) => void = () => undefined;
  const ended = new Promise<Ending>((resolve) => {
    end = (ending) => {
      if (stoppingSince !== undefined) return;
      stoppingSince = Date.now(); // now, not a microtask later: a relayed duplicate may be queued
      aborter.abort(new Stopped(ending.kind));
      resolve(ending);
    };
  });

  const runOne = async (cleanup: () => unknown) => {
    try {
      const limit = sleep(CLEANUP_LIMIT_MS, "limit" as const, { ref: false });
      if ((await Promise.race([Promise.resolve().then(cleanup), limit])) === "limit") {
        warn(`cleanup: still running after ${CLEANUP_LIMIT_MS / 1000} s; going on without it`);
        cleanupFailed = true;
      }
    } catch (error) {
      warn(`cleanup: ${error instanceof Error ? error.message : String(error)}`);
      cleanupFailed = true;
    }
  };
  // One at a time, newest first; a cleanup registered meanwhile joins the same queue.
  let cleaning = Promise.resolve();
  const cleanUp = () => {
    cleaning = cleaning.then(async () => {
      for (let next = cleanups.pop(); next; next = cleanups.pop()) await runOne(next);
    });
  };

  let signalledAt: number | undefined;
  const onSignal = (signal: NodeJS.Signals) => {
    const stop = signal as StopSignal;
    if (signalledAt === undefined) {
      signalledAt = Date.now();
      if (stoppingSince === undefined) {
        warn(`${name}: ${stop} received: stopping and cleaning up`);
        end({ kind: "signal", signal: stop });
      } else {
        warn(`${name}: ${stop} received: already cleaning up`);
      }
    } else if (Date.now() - signalledAt > REPEAT_SIGNAL_GRACE_MS) {
      warn(`${name}: ${stop} again: exiting now, without the remaining cleanups`);
      process.exit(128 + SIGNAL_NUMBERS[stop]);
    }
  };
  for (const signal of SIGNALS) process.on(signal, onSignal);
  // A stray rejection (a request the stop cut short) must not end the process mid-cleanup.
  const onStray = (error: unknown) => {
    if (stoppingSince === undefined) end({ kind: "failed", error });
    else warn(`${name}: after the stop: ${describe(error)}`);
  };
  process.on("uncaughtException", onStray);
  process.on("unhandledRejection", onStray);
  const timer = setTimeout(() => {
    warn(`${name}: hard time limit of ${timeoutS} s reached (--timeout): stopping and cleaning up`);
    end({ kind: "timeout" });
  }, timeoutS * 1000);

  const run: Run = {
    deadline,
    signal: aborter.signal,
    defer(cleanup) {
      cleanups.push(cleanup);
      if (stoppingSince === undefined) return;
      cleanUp(); // the cleanups may be running or done: this one must run too
      throw new Stopped("the run is stopping");
    },
    started(starting, cleanup) {
      run.defer(async () => {
        const value = await starting.then(
          (v) => ({ v }),
          () => null, // it failed to start: nothing to clean up, and the body reports why
        );
        if (value) await cleanup(value.v);
      });
      return starting.then((value) => {
        run.signal.throwIfAborted(); // stopped meanwhile: the body must not build on it
        return value;
      });
    },
    budgetMs() {
      const left = deadline - Date.now() - CLEANUP_RESERVE_MS;
      if (left <= 0) throw new Error(`out of time (--timeout ${timeoutS})`);
      return left;
    },
  };

  void body(run).then(
    () => end({ kind: "done" }),
    (error: unknown) => end({ kind: "failed", error }),
  );
  const ending = await ended;
  clearTimeout(timer);

  let code: number;
  switch (ending.kind) {
    case "done":
      code = EXIT.done;
      break;
    case "failed":
      warn(`${name} failed: ${describe(ending.error)}`);
      code = EXIT.failed;
      break;
    case "signal":
      code = 128 + SIGNAL_NUMBERS[ending.signal];
      break;
    case "timeout":
      code = EXIT.timedOut;
      break;
  }
  cleanUp();
  for (let pending = cleaning; ; pending = cleaning) {
    await pending;
    if (pending === cleaning) break; // no cleanup was registered while those ran
  }
  if (code === EXIT.done && cleanupFailed) {
    warn(`${name}: a cleanup failed`);
    code = EXIT.failed;
  }
  if (code !== EXIT.done) warn(`${name}: cleanups done; exit code ${code}`);
  process.exit(code);
}
