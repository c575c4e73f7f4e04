/**
 * The stack `npm run bench:assess` measures, started the way `npm run dev` starts it but with
 * nothing of the developer's: the SQL endpoint (PGlite in memory, or a fresh database on the
 * PostgreSQL server of DATABASE_URL), then `wrangler dev` on a free port with a `.dev.vars` of
 * its own (fresh signing key, master key and identity provider) in a temporary directory.
 *
 * The Worker is built once, by `wrangler deploy --dry-run` (wrangler's own bundler, as a deploy
 * does), and `wrangler dev --no-bundle` serves that build: an edit saved under src/ while the
 * benchmark runs cannot reload the Worker in the middle of a measurement.
 */
import { execFile } from "node:child_process";
import { once } from "node:events";
import { createRequire } from "node:module";
import { createServer } from "node:net";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import type { LocalIdp } from "../dev-idp.ts";
import { waitForOk } from "../dev-net.ts";
import { type GroupChild, spawnGroup } from "../dev-process.ts";
import { REPO_ROOT } from "../dev-state.ts";
import { ensureLocalDevVars } from "../dev-vars.ts";
import { localDatabaseUrl, localIdentityProvider } from "../local-keys.ts";
import type { DelaySampler } from "../sql-endpoint/delay.ts";
import { type SqlEndpoint, startSqlEndpoint } from "../sql-endpoint/index.ts";
import { startWorkerd } from "./assess-workerd.ts";
import type { Run } from "./harness.ts";

const HOST = "127.0.0.1";
const START_TIMEOUT_MS = 120_000;

export interface Stack {
  origin: string;
  endpoint: SqlEndpoint;
  /** The identity provider this run's Worker trusts (its private key signs the session). */
  idp: LocalIdp;
  /** `wrangler dev` (its proxy and inspector in the path) or plain workerd through Miniflare. */
  runtime: Runtime;
  /** Absent under plain workerd. */
  wrangler?: GroupChild;
  /** The Worker's bundle, and workerd's inspector port when `profile` asked for it. */
  script: string;
  inspectorPort?: number;
}

export type Runtime = "workerd" | "wrangler";

/** A `--runtime` flag's value, or an error naming the two accepted. */
export function runtimeOf(value: string | undefined): Runtime {
  const runtime = value ?? "workerd";
  if (runtime !== "workerd" && runtime !== "wrangler") {
    throw new Error(`--runtime must be workerd or wrangler, got ${JSON.stringify(runtime)}`);
  }
  return runtime;
}

/** A port nobody listens on right now (wrangler binds it a moment later). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen({ host: HOST, port: 0 }, () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

function wranglerBin(): string {
  const pkg = createRequire(import.meta.url).resolve("wrangler/package.json");
  return join(dirname(pkg), "bin/wrangler.js");
}

/** As `npm run dev` runs wrangler: offline, quiet, and without our own variables. */
function wranglerEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.DATABASE_URL;
  delete env.PORT;
  delete env.DEV_STATE_DIR;
  env.WRANGLER_SEND_METRICS = "false";
  env.WRANGLER_HIDE_BANNER = "true";
  env.CLOUDFLARE_CF_FETCH_ENABLED = "false";
  return env;
}

/**
 * The deployable bundle of workers/main.ts, as `wrangler deploy` would upload it. `signal`
 * ends the build: a stop must not leave it writing into a directory being removed.
 */
async function buildWorker(root: string, outDir: string, signal: AbortSignal): Promise<string> {
  const build = promisify(execFile)(
    process.execPath,
    [
      wranglerBin(),
      "deploy",
      "--dry-run",
      "--config",
      join(root, "wrangler.toml"),
      "--outdir",
      outDir,
    ],
    { cwd: root, env: wranglerEnv(), maxBuffer: 16 * 1024 * 1024, signal },
  );
  try {
    await build;
  } catch (error) {
    if (signal.aborted) {
      // The abort rejects at once; wait until the killed build has stopped writing.
      if (build.child.exitCode === null && build.child.signalCode === null) {
        await once(build.child, "exit");
      }
      throw signal.reason;
    }
    const output = error as { stdout?: string; stderr?: string };
    throw new Error(`wrangler could not build the Worker:\n${output.stderr || output.stdout}`);
  }
  return join(outDir, "main.js");
}

/**
 * Starts the stack; every part is registered with `run.defer` as it starts (so a failure or
 * Ctrl-C later still stops it). `workDir` holds the build, `.dev.vars` and the DOs' storage.
 */
export async function startStack(options: {
  databaseUrl: string | undefined;
  workDir: string;
  run: Run;
  log: (line: string) => void;
  runtime: Runtime;
  /** The injected round trip of each SQL request (`--db-rtt`), read anew per request. */
  dbRtt: DelaySampler;
  /** Opens workerd's inspector (plain workerd only), for `--profile`. */
  profile?: boolean;
  /** Consumes the Queues under plain workerd too (wrangler dev always does). */
  queues?: boolean;
  /**
   * The checkout whose Worker is built and measured, with its migrations (`--worker`): this
   * repository by default, or another (a worktree of an earlier commit) for a before/after
   * comparison made by the same benchmark code.
   */
  workerRoot?: string;
}): Promise<Stack> {
  const { workDir, run, log, runtime } = options;
  const root = options.workerRoot ?? REPO_ROOT;
  const endpoint = await run.started(
    startSqlEndpoint({
      databaseUrl: options.databaseUrl,
      fresh: true,
      migrationsFolder: join(root, "drizzle"),
      dbRtt: options.dbRtt,
    }),
    (started) => started.close(),
  );

  // Nothing to clean up but the wait: a stop kills the build, and the directories it writes
  // into are removed only once it has exited.
  const script = await run.started(
    buildWorker(root, join(workDir, "worker"), run.signal),
    () => {},
  );
  const [port, inspectorPort] = [await freePort(), await freePort()];
  const origin = `http://${HOST}:${port}`;
  // Tokens only: no sign-in here, so no IdP server; any issuer the Worker is told about will do.
  const idp = localIdentityProvider(`${origin}/local-idp`) as LocalIdp;
  const devVars = join(workDir, ".dev.vars");
  ensureLocalDevVars(devVars, idp);

  if (runtime === "workerd") {
    log(`starting the Worker under plain workerd (Miniflare) on ${origin}`);
    const inspector = options.profile ? { inspectorPort } : {};
    await startWorkerd({
      script,
      devVars,
      vars: { DATABASE_URL: localDatabaseUrl(endpoint.url), PUBLIC_BASE_URL: origin },
      host: HOST,
      port,
      run,
      ...inspector,
      ...(options.queues ? { queues: true } : {}),
    });
    return { origin, endpoint, idp, runtime, script, ...inspector };
  }

  log(`starting wrangler dev on ${origin}`);
  const args = [
    wranglerBin(),
    "dev",
    script,
    "--no-bundle",
    "--config",
    join(root, "wrangler.toml"),
    "--local",
    "--ip",
    HOST,
    "--port",
    String(port),
    "--inspector-port",
    String(inspectorPort),
    "--persist-to",
    join(workDir, "state"),
    // Not the repository's .dev.vars: this run's own (--env-file also turns that lookup off).
    "--env-file",
    devVars,
    "--var",
    `DATABASE_URL:${localDatabaseUrl(endpoint.url)}`,
    "--var",
    `PUBLIC_BASE_URL:${origin}`,
    "--show-interactive-dev-session=false",
    // No line per request: printing thousands of them would cost CPU the Worker competes for.
    "--log-level",
    "warn",
  ];
  const wrangler = spawnGroup("wrangler", process.execPath, args, {
    cwd: root,
    env: wranglerEnv(),
  });
  run.defer(() => wrangler.stop());
  process.on("exit", () => wrangler.killNow());

  const aborter = new AbortController();
  const timer = setTimeout(
    () => aborter.abort(new Error(`${origin}/health did not answer within 120 s`)),
    START_TIMEOUT_MS,
  );
  void wrangler.exited.then(({ code, signal }) =>
    aborter.abort(new Error(`wrangler exited while starting (${signal ?? `code ${code}`})`)),
  );
  try {
    await waitForOk(`${origin}/health`, {
      signal: aborter.signal,
      slowAfterMs: START_TIMEOUT_MS,
      onSlow: () => undefined,
    });
  } finally {
    clearTimeout(timer);
  }
  return { origin, endpoint, idp, runtime, wrangler, script };
}
