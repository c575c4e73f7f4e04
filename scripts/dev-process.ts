/**
 * A child process in its own process group, with its output prefixed line by line.
 *
 * Its own group because wrangler forks workerd (twice) and esbuild: signalling the group reaches
 * them all, so no workerd outlives a stop. It also keeps a terminal's Ctrl-C away from the
 * child, so shutdown happens in our order (Worker first, then the database it uses).
 */
import { type ChildProcess, type SpawnOptions, spawn } from "node:child_process";
import { once } from "node:events";
import { readdirSync, readFileSync } from "node:fs";
import { createInterface } from "node:readline";
import type { Readable, Writable } from "node:stream";
import { setTimeout as sleep } from "node:timers/promises";

export interface ExitStatus {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface GroupChild {
  readonly child: ChildProcess;
  /** Resolves when the group leader has exited. */
  readonly exited: Promise<ExitStatus>;
  /** SIGTERM to the group, SIGKILL after `graceMs`; resolves once no member remains. */
  stop(graceMs?: number): Promise<void>;
  /** Synchronous last resort (process `exit` handler): SIGKILL to whatever is left. */
  killNow(): void;
}

function pipeLines(from: Readable | null, to: Writable, prefix: string): void {
  if (!from) return;
  createInterface({ input: from, crlfDelay: Number.POSITIVE_INFINITY }).on("line", (line) => {
    to.write(`${prefix} ${line}\n`);
  });
}

/** Sends a signal to the whole group; false once the group has no member left. */
function signalGroup(pgid: number, signal: NodeJS.Signals | 0): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch {
    return false; // ESRCH: every member has exited
  }
}

/**
 * Whether a member of the group still runs. Zombies do not count: once wrangler is gone its
 * exited workerd children wait for init to reap them, which can take seconds (or never, under
 * an init that does not reap), and they hold no port, file or memory worth waiting for.
 */
function groupRunning(pgid: number): boolean {
  if (!signalGroup(pgid, 0)) return false;
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return true; // no procfs (macOS): the signal probe is all we have
  }
  return entries.some((entry) => {
    if (!/^\d+$/.test(entry)) return false;
    try {
      // Fields after the parenthesized command name: state, ppid, pgrp, ...
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const [state, , pgrp] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      return Number(pgrp) === pgid && state !== "Z" && state !== "X";
    } catch {
      return false; // exited while we looked
    }
  });
}

async function groupGone(pgid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (groupRunning(pgid)) {
    if (Date.now() > deadline) return false;
    await sleep(50);
  }
  return true;
}

export function spawnGroup(
  name: string,
  command: string,
  args: string[],
  options: Omit<SpawnOptions, "detached" | "stdio">,
): GroupChild {
  const child = spawn(command, args, {
    ...options,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  const prefix = `[${name}]`;
  pipeLines(child.stdout, process.stdout, prefix);
  pipeLines(child.stderr, process.stderr, prefix);
  const exited = new Promise<ExitStatus>((resolve) => {
    child.once("exit", (code, signal) => {
      // Let the last lines (the reason it died) print first, but do not wait for "close" for
      // ever: a surviving grandchild (wrangler's own child, workerd) holds the pipes open.
      const closed = once(child, "close").catch(() => undefined);
      void Promise.race([closed, sleep(1_000)]).then(() => resolve({ code, signal }));
    });
    // Spawn failure (e.g. ENOENT): there will be no "exit" event.
    child.once("error", () => resolve({ code: child.exitCode ?? 127, signal: null }));
  });
  const pgid = child.pid;
  let gone = pgid === undefined;

  return {
    child,
    exited,
    async stop(graceMs = 5_000) {
      if (pgid === undefined) return;
      signalGroup(pgid, "SIGTERM");
      const inTime = await Promise.race([exited.then(() => true), sleep(graceMs, false)]);
      // A member that ignored SIGTERM (or the leader itself) must not survive the stop.
      if (!inTime || !(await groupGone(pgid, 3_000))) signalGroup(pgid, "SIGKILL");
      await exited;
      gone = await groupGone(pgid, 3_000);
    },
    killNow() {
      // Not after a completed stop: the group id could by then belong to someone else.
      if (!gone && pgid !== undefined) signalGroup(pgid, "SIGKILL");
    },
  };
}
