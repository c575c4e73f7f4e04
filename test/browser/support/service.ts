/**
 * The service the browser tests open, started the way a developer starts it: `npm run dev`
 * (the Worker in wrangler dev, its static assets, the embedded database, the local identity
 * provider and the Stripe stand-in), on a free port, with its state in a temporary directory
 * (DEV_STATE_DIR), so the developer's own `.dev.vars` and `.data/` are never touched. With
 * DATABASE_URL set (CI's second pass) it gets a fresh database on that server, dropped at the end.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { createWriteStream, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import {
  createFreshDatabase,
  type FreshDatabase,
} from "../../../scripts/sql-endpoint/fresh-database";
import { freePort, survivors } from "../../support/processes";

export const REPO = resolve(import.meta.dirname, "../../..");
/** Git-ignored: screenshots and the service's log (docs/browser-tests.md). */
export const RESULTS_DIR = join(REPO, ".browser-results");

const READY_TIMEOUT_MS = 120_000;
const STOP_TIMEOUT_MS = 15_000;

/** How long a read-only request to the dev server may go unanswered before it is asked again. */
const READ_TIMEOUT_MS = 15_000;

/**
 * A read-only request from the test itself (not the page) to the dev server. `wrangler dev` now
 * and then leaves a request unanswered for tens of seconds or more with nothing else wrong (a
 * plain Node fetch of /openapi.json waited 121 s in one CI run, the service.log line saying
 * `GET /openapi.json 200 OK (121361ms)`; see docs/browser-tests.md): a GET unanswered after
 * 15 s is aborted and asked once more, saying so on stderr. Its second attempt has no allowance.
 */
export async function getFromDevServer(
  url: string,
  what: string,
  timeoutMs = READ_TIMEOUT_MS,
): Promise<Response> {
  try {
    return await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
  } catch (error) {
    if (!(error instanceof DOMException && error.name === "TimeoutError")) throw error;
    process.stderr.write(
      `[browser] ${what}: GET ${url} unanswered by the dev server after ${timeoutMs} ms; ` +
        "asking once more\n",
    );
    return fetch(url);
  }
}

export interface RunningService {
  /** `http://127.0.0.1:<port>`: the Worker, its assets and the public API. */
  origin: string;
  /** The DEV_STATE_DIR: `npm run token` with it mints sessions from this service's local IdP. */
  stateDir: string;
  /** The local identity provider's origin (its issuer), where the console's sign-in goes. */
  identityProvider: string;
  /**
   * The dev server's SQL-over-HTTP endpoint (`http://127.0.0.1:<port>/sql`, the one the Worker
   * reaches its database through), for tests that seed data in bulk (support/seed-load.ts).
   */
  sqlEndpoint: string;
  /** Everything `npm run dev` printed, also in `.browser-results/service.log`. */
  output(): string;
  /** Stops the service (SIGTERM, as Ctrl-C would), removes its state and its fresh database. */
  stop(): Promise<void>;
}

function devEnv(stateDir: string, port: number, databaseUrl: string | undefined) {
  const env: NodeJS.ProcessEnv = { ...process.env, DEV_STATE_DIR: stateDir, PORT: String(port) };
  // A developer's shell, not vitest's: no test-mode switches leak into wrangler or miniflare.
  for (const key of Object.keys(env)) {
    if (key.startsWith("VITEST") || key === "NODE_ENV") delete env[key];
  }
  delete env.PUBLIC_BASE_URL; // the service names itself by the address the browser opens
  if (databaseUrl) env.DATABASE_URL = databaseUrl;
  else delete env.DATABASE_URL;
  return env;
}

async function waitReady(child: ChildProcess, origin: string, output: () => string) {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) {
      throw new Error(`npm run dev exited (${child.exitCode}):\n${output()}`);
    }
    try {
      const response = await fetch(`${origin}/health`, { signal: AbortSignal.timeout(2_000) });
      await response.body?.cancel();
      if (response.status === 200) return;
    } catch {
      // not listening yet
    }
    await sleep(250);
  }
  throw new Error(`${origin}/health not ready after ${READY_TIMEOUT_MS} ms:\n${output()}`);
}

/** Starts `npm run dev` and resolves once `/health` answers 200. */
export async function startService(): Promise<RunningService> {
  const stateDir = mkdtempSync(join(tmpdir(), "agent-risk-browser-"));
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  let fresh: FreshDatabase | undefined;
  if (process.env.DATABASE_URL) fresh = await createFreshDatabase(process.env.DATABASE_URL);

  mkdirSync(RESULTS_DIR, { recursive: true });
  const log = createWriteStream(join(RESULTS_DIR, "service.log"));
  let output = "";
  const child = spawn("npm", ["run", "dev"], {
    cwd: REPO,
    env: devEnv(stateDir, port, fresh?.url),
    detached: true, // a group of its own, for the last-resort kill
    stdio: ["ignore", "pipe", "pipe"],
  });
  for (const stream of [child.stdout, child.stderr]) {
    stream?.on("data", (chunk: Buffer) => {
      output += chunk.toString();
      log.write(chunk);
    });
  }

  let stopped: Promise<void> | undefined;
  const stop = () => {
    stopped ??= (async () => {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = once(child, "exit");
        child.kill("SIGTERM"); // npm relays it; dev.ts stops wrangler, then the database
        // The deadline is cancelled once the child exits: a pending timer would hold vitest open.
        const deadline = new AbortController();
        const timeout = sleep(STOP_TIMEOUT_MS, "timeout" as const, { signal: deadline.signal });
        const result = await Promise.race([exited, timeout.catch(() => "exited" as const)]);
        deadline.abort();
        if (result === "timeout" && child.pid) {
          try {
            process.kill(-child.pid, "SIGKILL");
          } catch {
            // already gone
          }
        }
      }
      // wrangler and workerd run in a group of their own: whatever names our state dies too.
      for (const { pid } of survivors(stateDir)) process.kill(pid, "SIGKILL");
      rmSync(stateDir, { recursive: true, force: true });
      await fresh?.drop();
      log.end();
    })();
    return stopped;
  };

  let identityProvider: string;
  let sqlEndpoint: string;
  try {
    await waitReady(child, origin, () => output);
    // `npm run dev` wrote it before starting the Worker: the issuer is the IdP's origin.
    const idp = JSON.parse(readFileSync(join(stateDir, ".data", "local-idp.json"), "utf8"));
    identityProvider = new URL(idp.issuer).origin;
    // Printed by the endpoint before wrangler starts (scripts/sql-endpoint/index.ts).
    const listening = /\[sql\] listening on (http:\/\/\S+\/sql)/.exec(output)?.[1];
    if (!listening) throw new Error(`npm run dev named no SQL endpoint:\n${output}`);
    sqlEndpoint = listening;
  } catch (error) {
    await stop();
    throw error;
  }
  return { origin, stateDir, identityProvider, sqlEndpoint, output: () => output, stop };
}
