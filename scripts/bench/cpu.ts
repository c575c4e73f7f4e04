/**
 * Where the CPU goes during a benchmark run, in % of one core: this Node process (the SQL
 * endpoint, and PGlite when it is the backend), its child processes (workerd, started by
 * Miniflare), and the whole host (from /proc/stat; with PostgreSQL as the backend, host minus
 * the other two is mostly the server). Linux only; elsewhere the child and host figures are null.
 */
import { readdirSync, readFileSync } from "node:fs";

/** USER_HZ: the unit of /proc times on every mainstream Linux build. */
const TICKS_PER_SECOND = 100;

export interface CpuSample {
  wallMs: number;
  nodeMicros: number;
  childTicks: number | null;
  hostBusyTicks: number | null;
  hostTotalTicks: number | null;
}

export interface CpuShare {
  node: number;
  children: number | null;
  host: number | null;
}

/** pid, ppid and utime+stime of every process /proc lists. */
function processTable(): { pid: number; ppid: number; ticks: number }[] {
  const table = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      // Fields after "(comm)": state ppid ... utime (14th overall) stime (15th).
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      table.push({
        pid: Number(name),
        ppid: Number(fields[1]),
        ticks: Number(fields[11]) + Number(fields[12]),
      });
    } catch {
      // The process exited between readdir and read.
    }
  }
  return table;
}

function childTicks(): number | null {
  try {
    const table = processTable();
    const descendants = new Set([process.pid]);
    let grew = true;
    while (grew) {
      grew = false;
      for (const { pid, ppid } of table) {
        if (descendants.has(ppid) && !descendants.has(pid)) {
          descendants.add(pid);
          grew = true;
        }
      }
    }
    descendants.delete(process.pid);
    return table.filter((p) => descendants.has(p.pid)).reduce((sum, p) => sum + p.ticks, 0);
  } catch {
    return null;
  }
}

function hostTicks(): { busy: number; total: number } | null {
  try {
    const line = readFileSync("/proc/stat", "utf8").split("\n")[0] ?? "";
    const values = line.trim().split(/\s+/).slice(1, 9).map(Number);
    const total = values.reduce((sum, v) => sum + v, 0);
    const idle = (values[3] ?? 0) + (values[4] ?? 0); // idle + iowait
    return { busy: total - idle, total };
  } catch {
    return null;
  }
}

export function sampleCpu(): CpuSample {
  const usage = process.cpuUsage();
  const host = hostTicks();
  return {
    wallMs: performance.now(),
    nodeMicros: usage.user + usage.system,
    childTicks: childTicks(),
    hostBusyTicks: host?.busy ?? null,
    hostTotalTicks: host?.total ?? null,
  };
}

/** Average use between two samples, in % of one core (so up to 100 × cores for the host). */
export function cpuShare(before: CpuSample, after: CpuSample, cores: number): CpuShare {
  const wallMs = Math.max(1, after.wallMs - before.wallMs);
  const node = ((after.nodeMicros - before.nodeMicros) / 1000 / wallMs) * 100;
  const children =
    before.childTicks === null || after.childTicks === null
      ? null
      : (((after.childTicks - before.childTicks) * 1000) / TICKS_PER_SECOND / wallMs) * 100;
  let host: number | null = null;
  if (
    before.hostBusyTicks !== null &&
    after.hostBusyTicks !== null &&
    before.hostTotalTicks !== null &&
    after.hostTotalTicks !== null
  ) {
    const total = after.hostTotalTicks - before.hostTotalTicks;
    host = total > 0 ? ((after.hostBusyTicks - before.hostBusyTicks) / total) * 100 * cores : 0;
  }
  return { node, children, host };
}
