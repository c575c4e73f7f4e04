/**
 * CPU time of this process's descendants by role (Linux /proc), so `bench:assess` can tell the
 * workerd that runs the Worker and its Durable Object from wrangler dev's own machinery: its
 * Node process and the second workerd, which holds wrangler's proxy and inspector Workers and
 * listens on the public port. workerd's clock moves only at I/O, so `Server-Timing` cannot
 * resolve the pipeline's compute; the Worker's CPU time per request can bound it. Elsewhere
 * (no procfs): an empty map.
 */
import { readdirSync, readFileSync } from "node:fs";

/** USER_HZ: the unit of /proc times on every mainstream Linux build. */
const TICK_MS = 10;

export type Role = "worker" | "wrangler" | "other";

/**
 * Which part of the stack a descendant process is. Without a `publicAddress` (plain workerd
 * through Miniflare, no wrangler) every workerd is the Worker's.
 */
function roleOf(pid: number, name: string, publicAddress: string | null): Role {
  if (name === "node") return "wrangler";
  if (name !== "workerd") return "other";
  if (publicAddress === null) return "worker";
  try {
    const args = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
    return args.includes(`--socket-addr=entry=${publicAddress}`) ? "wrangler" : "worker";
  } catch {
    return "other";
  }
}

interface Descendant {
  pid: number;
  role: Role;
  /** CPU (user + system) in milliseconds, in 10 ms ticks. */
  ms: number;
}

/** This process's descendants with their roles; empty without procfs. */
function descendants(publicAddress: string | null): Descendant[] {
  let table: { pid: number; ppid: number; name: string; ms: number }[] = [];
  try {
    table = readdirSync("/proc")
      .filter((entry) => /^\d+$/.test(entry))
      .flatMap((entry) => {
        try {
          const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
          const name = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
          // After "(comm)": state ppid ... utime (14th field overall) stime (15th).
          const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
          const ticks = Number(fields[11]) + Number(fields[12]);
          return [{ pid: Number(entry), ppid: Number(fields[1]), name, ms: ticks * TICK_MS }];
        } catch {
          return []; // exited meanwhile
        }
      });
  } catch {
    return []; // no procfs
  }
  const mine = new Set([process.pid]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const p of table) {
      if (mine.has(p.ppid) && !mine.has(p.pid)) {
        mine.add(p.pid);
        grew = true;
      }
    }
  }
  return table
    .filter((p) => p.pid !== process.pid && mine.has(p.pid))
    .map((p) => ({ pid: p.pid, role: roleOf(p.pid, p.name, publicAddress), ms: p.ms }));
}

/**
 * Milliseconds of CPU (user + system) per role, over all descendants; `publicAddress` is
 * wrangler dev's `host:port`, null under plain workerd.
 */
export function descendantCpuMs(publicAddress: string | null): Map<Role, number> {
  const byRole = new Map<Role, number>();
  for (const p of descendants(publicAddress)) {
    byRole.set(p.role, (byRole.get(p.role) ?? 0) + p.ms);
  }
  return byRole;
}

/**
 * A nanosecond clock of the CPU that the workerd running the Worker has used: the run time of
 * every one of its threads (`/proc/<pid>/task/<tid>/schedstat`, which the scheduler keeps in
 * nanoseconds, unlike the 10 ms ticks of `/proc/<pid>/stat`), summed. Fine enough to price
 * one request when requests go one at a time. Null without procfs or schedstat.
 */
export function workerCpuClock(publicAddress: string | null): (() => number) | null {
  return summedOverWorkerThreads(publicAddress, (task) =>
    Number(readFileSync(`${task}/schedstat`, "utf8").split(" ")[0]),
  );
}

/**
 * How many times the threads of the workerd running the Worker went to sleep waiting for
 * something to do (their voluntary context switches), summed. Each sleep is a wake-up later,
 * which costs CPU of its own: fewer per request when requests arrive together. Null without
 * procfs.
 */
export function workerSleeps(publicAddress: string | null): (() => number) | null {
  return summedOverWorkerThreads(publicAddress, (task) =>
    Number(/^voluntary_ctxt_switches:\s+(\d+)$/m.exec(readFileSync(`${task}/status`, "utf8"))?.[1]),
  );
}

/** A reading of `read` summed over every thread of the Worker's workerd; null if unreadable. */
function summedOverWorkerThreads(
  publicAddress: string | null,
  read: (task: string) => number,
): (() => number) | null {
  const pids = descendants(publicAddress)
    .filter((p) => p.role === "worker")
    .map((p) => p.pid);
  const sum = () => {
    let total = 0;
    for (const pid of pids) {
      for (const tid of readdirSync(`/proc/${pid}/task`)) {
        try {
          total += read(`/proc/${pid}/task/${tid}`);
        } catch {
          // the thread exited between the listing and the read; its count is gone with it
        }
      }
    }
    return total;
  };
  try {
    return pids.length > 0 && Number.isFinite(sum()) ? sum : null;
  } catch {
    return null;
  }
}

/** Per-role CPU milliseconds spent between two samples. */
export function cpuMsBetween(
  before: Map<Role, number>,
  after: Map<Role, number>,
): Map<Role, number> {
  const spent = new Map<Role, number>();
  for (const [name, ms] of after) spent.set(name, ms - (before.get(name) ?? 0));
  return spent;
}
