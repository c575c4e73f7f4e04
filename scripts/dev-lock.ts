/**
 * One `npm run dev` per state directory: two would open the same PGlite data directory from two
 * processes, which corrupts it, and would fight over wrangler's persisted state.
 */
import { readFileSync, unlinkSync, writeFileSync } from "node:fs";

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM"; // alive, someone else's
  }
}

function readPid(path: string): number | undefined {
  try {
    const pid = Number.parseInt(readFileSync(path, "utf8"), 10);
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** Takes the lock (replacing a stale one left by a killed run); returns its release. */
export function acquireDevLock(path: string): () => void {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      writeFileSync(path, `${process.pid}\n`, { flag: "wx", mode: 0o600 });
      return () => {
        if (readPid(path) === process.pid) unlinkSync(path);
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      const owner = readPid(path);
      if (owner !== undefined && owner !== process.pid && isRunning(owner)) {
        throw new Error(
          `npm run dev is already running for this state directory (pid ${owner}); stop it ` +
            `first, or remove ${path} if that process is not the dev server`,
        );
      }
      unlinkSync(path); // stale: its process is gone
    }
  }
  throw new Error(`could not take the lock ${path}`);
}
