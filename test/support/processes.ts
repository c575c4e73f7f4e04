import { readdirSync, readFileSync } from "node:fs";
import { createServer } from "node:net";

/** A loopback port nobody listens on right now. */
export function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolvePort(port));
    });
  });
}

/**
 * Processes (not zombies) whose command line names `needle`: what stopping a dev server must
 * leave none of. Empty without procfs (macOS): a process group's SIGKILL is all there is.
 */
export function survivors(needle: string): { pid: number; args: string }[] {
  const found: { pid: number; args: string }[] = [];
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return found;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const args = readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0").join(" ");
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
      if (args.includes(needle) && state !== "Z") found.push({ pid: Number(entry), args });
    } catch {
      // exited meanwhile
    }
  }
  return found;
}
