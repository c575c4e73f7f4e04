import { createServer } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";

/** Fails early and clearly, instead of after the database started and wrangler crashed. */
export function assertPortFree(host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", (error: NodeJS.ErrnoException) => {
      reject(
        error.code === "EADDRINUSE"
          ? new Error(`port ${port} on ${host} is in use: stop what runs there or set PORT=...`)
          : error,
      );
    });
    server.listen({ host, port, exclusive: true }, () => server.close(() => resolve()));
  });
}

/**
 * Polls until `url` answers 200, or `signal` aborts. No deadline: a Worker that does not build
 * yet is the developer's to fix, and wrangler reloads it when they do; `onSlow` says so once.
 */
export async function waitForOk(
  url: string,
  { signal, slowAfterMs, onSlow }: { signal: AbortSignal; slowAfterMs: number; onSlow: () => void },
): Promise<void> {
  const slowAt = Date.now() + slowAfterMs;
  let toldSlow = false;
  while (!signal.aborted) {
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(2_000) });
      await response.body?.cancel();
      if (response.status === 200) return;
    } catch {
      // not listening yet
    }
    if (!toldSlow && Date.now() > slowAt) {
      toldSlow = true;
      onSlow();
    }
    await sleep(250);
  }
  throw signal.reason instanceof Error ? signal.reason : new Error("stopped while starting");
}
