/**
 * `npm run dev`: the whole service locally, in one command.
 *
 *   1. starts the local identity provider on loopback (dev-idp-server.ts; its key in
 *      `.data/local-idp.json`, also read by `npm run token`) and ensures `.dev.vars` (signing
 *      key, the IdP's issuer and public side, flags);
 *   2. refreshes the API reference's renderer in public/docs/vendor/ if node_modules changed,
 *      and rebuilds the console into public/console/assets/ if its sources changed;
 *   3. starts the SQL-over-HTTP endpoint: PGlite under `.data/pglite`, or the PostgreSQL server
 *      named by DATABASE_URL (used as is);
 *   4. starts `wrangler dev` (local, non-interactive) on 127.0.0.1:PORT (default 8787), with
 *      DATABASE_URL pointing at the endpoint, and waits for /health;
 *   5. on SIGINT/SIGTERM stops wrangler's whole process group, then the endpoint, and exits 0;
 *      if a child dies on its own, stops the rest and exits 1.
 *
 * DEV_STATE_DIR moves `.dev.vars` and `.data/` elsewhere (see dev-state.ts).
 *
 * package.json runs it as `exec node --import tsx scripts/dev.ts`, which matters for stopping:
 * - `exec`: npm forwards SIGTERM to its child, the `sh -c` running the script, and sh dies
 *   without passing it on, orphaning this process (and wrangler, and PGlite) while npm exits;
 * - `node --import tsx`, not the `tsx` CLI: that one relays signals to its node child and
 *   SIGKILLs it when the child does not acknowledge within 30 ms, which happens whenever PGlite
 *   keeps the event loop busy (opening, migrating, a long query): no cleanup, stale lock.
 */
import { mkdirSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, relative } from "node:path";
import { ensureConsoleBuild } from "./build-console.ts";
import { ensureReferenceBundle } from "./build-reference.ts";
import { redactDatabaseUrl } from "./database-url.ts";
import { startLocalIdp } from "./dev-idp.ts";
import { acquireDevLock } from "./dev-lock.ts";
import { assertPortFree, waitForOk } from "./dev-net.ts";
import { type GroupChild, spawnGroup } from "./dev-process.ts";
import { type DevPaths, devPaths, REPO_ROOT } from "./dev-state.ts";
import { startStripeStandIn } from "./dev-stripe.ts";
import { ensureLocalDevVars, readDevVars } from "./dev-vars.ts";
import { localDatabaseUrl } from "./local-keys.ts";
import { MigrationHistoryError } from "./migration-history.ts";
import { startSqlEndpoint } from "./sql-endpoint/index.ts";

const HOST = "127.0.0.1";
/** After this long without /health, say what to look at (and keep waiting). */
const SLOW_START_MS = 60_000;
/** A repeated signal within this window is the same stop (npm relays the terminal's Ctrl-C). */
const REPEAT_SIGNAL_GRACE_MS = 3_000;

const say = (line: string) => process.stdout.write(`[dev] ${line}\n`);
const warn = (line: string) => process.stderr.write(`[dev] ${line}\n`);

function parsePort(value: string | undefined): number {
  const port = Number(value ?? 8787);
  if (!Number.isInteger(port) || port < 1 || port > 65_535) {
    throw new Error(`PORT must be a TCP port number, got ${JSON.stringify(value)}`);
  }
  return port;
}

function shown(path: string): string {
  const rel = relative(process.cwd(), path);
  return rel && !rel.startsWith("..") ? rel : path;
}

/**
 * The local identity provider's server (its key created on the first run), then `.dev.vars`,
 * whose IDP_ISSUER follows the server's origin. The console's callback is registered at this
 * server's address and at PUBLIC_BASE_URL's, when the developer set another.
 */
async function prepareState(paths: DevPaths, port: number, origin: string, publicBase: string) {
  const callback = "/console/auth/callback";
  const started = await startLocalIdp(paths.localIdp, {
    host: HOST,
    avoidPort: port,
    redirectUris: [...new Set([`${origin}${callback}`, `${publicBase}${callback}`])],
  });
  if (started.created) say(`created a local identity provider (${shown(paths.localIdp)})`);
  if (started.moved) {
    say(`the local identity provider moved to ${started.server.url} (its port was taken):`);
    say("  sessions minted before this run no longer verify");
  }
  const change = ensureLocalDevVars(paths.devVars, started.idp);
  if (change.created) {
    say(`created ${shown(paths.devVars)} with a new signing key (mode 0600, git-ignored)`);
  } else if (change.added.length > 0 || change.updated.length > 0) {
    const what = [...change.added.map((k) => `+${k}`), ...change.updated.map((k) => `~${k}`)];
    say(`updated ${shown(paths.devVars)}: ${what.join(" ")}`);
  }
  return started.server;
}

/**
 * The Worker's PUBLIC_BASE_URL: the developer's own (the environment, then .dev.vars: a tunnel's
 * address, say), else this server's address. Passed per start like DATABASE_URL, because the
 * port can change between runs; `--var` outranks .dev.vars, so it is resolved here, once.
 */
function publicBaseUrlOf(paths: DevPaths, origin: string): string {
  return (
    process.env.PUBLIC_BASE_URL || readDevVars(paths.devVars)?.get("PUBLIC_BASE_URL") || origin
  );
}

function wranglerArgs(
  paths: DevPaths,
  port: number,
  databaseUrl: string,
  publicBaseUrl: string,
  stripeApiBase: string | undefined,
): string[] {
  const bin = join(
    dirname(createRequire(import.meta.url).resolve("wrangler/package.json")),
    "bin/wrangler.js",
  );
  const args = [
    bin,
    "dev",
    "--config",
    join(REPO_ROOT, "wrangler.toml"),
    "--local",
    "--ip",
    HOST,
    "--port",
    String(port),
    "--persist-to",
    paths.wranglerState,
    "--show-interactive-dev-session=false",
    // Per start, not in .dev.vars: the endpoint's port can change between runs.
    "--var",
    `DATABASE_URL:${databaseUrl}`,
    "--var",
    `PUBLIC_BASE_URL:${publicBaseUrl}`,
  ];
  if (stripeApiBase) args.push("--var", `STRIPE_API_BASE:${stripeApiBase}`);
  // Wrangler reads .dev.vars beside wrangler.toml by itself; a relocated one must be named.
  // (--env-file disables that lookup, and its values go through dotenv-expand: `$` expands.)
  if (paths.devVars !== join(REPO_ROOT, ".dev.vars")) args.push("--env-file", paths.devVars);
  return args;
}

function wranglerEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  // The Worker's DATABASE_URL and PUBLIC_BASE_URL come from --var; these are ours, not wrangler's.
  delete env.DATABASE_URL;
  delete env.PUBLIC_BASE_URL;
  delete env.PORT;
  delete env.DEV_STATE_DIR;
  // Offline-friendly and quiet: no telemetry, no update check, no fetch of Request.cf data
  // (each waits on the network and prints a stack trace when there is none).
  env.WRANGLER_SEND_METRICS ??= "false";
  env.WRANGLER_HIDE_BANNER ??= "true";
  env.CLOUDFLARE_CF_FETCH_ENABLED ??= "false";
  if (process.stdout.isTTY) env.FORCE_COLOR ??= "1";
  return env;
}

function printReady(
  origin: string,
  identityProvider: string,
  paths: DevPaths,
  database: string,
  stripe: string,
  seconds: string,
): void {
  const stateDir = process.env.DEV_STATE_DIR ? `DEV_STATE_DIR=${process.env.DEV_STATE_DIR} ` : "";
  const lines = [
    `ready in ${seconds} s`,
    `  API       ${origin}`,
    `  console   ${origin}/console/  (sign in with any user name)`,
    `  IdP       ${identityProvider}  (the local identity provider)`,
    `  health    ${origin}/health`,
    `  OpenAPI   ${origin}/openapi.json`,
    `  reference ${origin}/docs`,
    `  JWKS      ${origin}/.well-known/jwks.json`,
    `  database  ${database}`,
    `  Stripe    ${stripe}`,
    `  state     ${shown(paths.devVars)}, ${shown(paths.data)}/`,
    "next steps (another shell):",
    `  TOKEN=$(${stateDir}npm run -s token -- --sub alice)   # the console's user "alice"`,
    `  curl -s -X POST ${origin}/v1/orgs -H "authorization: Bearer $TOKEN"`,
    `  curl -s -X POST ${origin}/v1/api-keys -H "authorization: Bearer $TOKEN" \\`,
    `    -H 'content-type: application/json' -d '{"name":"dev","scopes":["assess:read"]}'`,
    `  curl -s ${origin}/v1/me -H "x-api-key: <the key from the answer above>"`,
    "Ctrl-C stops everything.",
  ];
  for (const line of lines) say(line);
}

/**
 * What to do about a database that the migrations in drizzle/ cannot bring up to date (above
 * all, one made before they were squashed into a baseline): recreate it, with the exact paths.
 * `.data/` goes as a whole, because wrangler's Durable Object state there (the ledger's sequence
 * numbers and hashes) belongs with the database it was written beside.
 */
function staleDatabaseAdvice(error: MigrationHistoryError, paths: DevPaths): string[] {
  const databaseUrl = process.env.DATABASE_URL;
  const where = databaseUrl
    ? `the PostgreSQL database ${redactDatabaseUrl(databaseUrl)}`
    : `the local database in ${paths.pglite}`;
  const lines = [
    `cannot start: ${where} was migrated by another history than drizzle/ holds:`,
    `  ${error.reason}.`,
  ];
  if (error.unknownMigration) {
    lines.push(
      "The migrations were squashed into one baseline (drizzle/0000_baseline.sql) before the",
      `first release: a ${shown(paths.data)}/ from before that cannot be upgraded.`,
    );
  }
  lines.push(
    "Recreate the local state (this deletes the local data, wrangler's Durable Object state and",
    `the local identity provider; ${shown(paths.devVars)} and its signing key stay):`,
  );
  if (databaseUrl) {
    lines.push("  drop and recreate that database (or point DATABASE_URL at an empty one), and");
  }
  lines.push(`  rm -rf ${paths.data}`, "  npm run dev");
  return lines;
}

interface StopRequest {
  code: number;
  reason: string;
}

async function main(): Promise<number> {
  const startedAt = Date.now();
  const port = parsePort(process.env.PORT);
  const origin = `http://${HOST}:${port}`;
  const paths = devPaths();
  const cleanups: (() => Promise<void> | void)[] = [];
  let wrangler: GroupChild | undefined;

  let requestStop: (request: StopRequest) => void = () => undefined;
  const stopRequested = new Promise<StopRequest>((resolve) => {
    requestStop = resolve;
  });
  let stopping = false;
  let stoppingSince = 0;
  const markStopping = () => {
    if (stopping) return;
    stopping = true;
    stoppingSince = Date.now();
  };
  const aborter = new AbortController();
  void stopRequested.then((request) => {
    markStopping();
    aborter.abort(new Error(request.reason));
  });

  const onSignal = (signal: NodeJS.Signals) => {
    if (!stopping) {
      markStopping(); // now, not a microtask later: a relayed duplicate may be queued already
      requestStop({ code: 0, reason: `${signal}: stopping` });
    } else if (Date.now() - stoppingSince > REPEAT_SIGNAL_GRACE_MS) {
      warn(`${signal} again: killing everything now`);
      wrangler?.killNow();
      process.exit(1);
    }
  };
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) process.on(signal, onSignal);
  const onCrash = (error: unknown) => {
    warn(
      `internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
    );
    requestStop({ code: 1, reason: "internal error" });
  };
  process.on("uncaughtException", onCrash);
  process.on("unhandledRejection", onCrash);
  // Last resort if this process ends without the orderly stop: no workerd left behind.
  process.on("exit", () => wrangler?.killNow());

  /** Waits for `work` unless a stop comes first (then `undefined`). */
  const unlessStopped = <T>(work: Promise<T>): Promise<T | undefined> =>
    Promise.race([work, stopRequested.then(() => undefined)]);

  try {
    // The lock first: it guards everything below, including the first run's key generation.
    mkdirSync(paths.data, { recursive: true, mode: 0o700 });
    cleanups.push(acquireDevLock(paths.lock));
    await assertPortFree(HOST, port);
    // Before .dev.vars is read: a developer's PUBLIC_BASE_URL there is a redirect URI too.
    const idpServer = await prepareState(paths, port, origin, publicBaseUrlOf(paths, origin));
    cleanups.push(() => idpServer.close());
    // `npm ci` built it; a node_modules changed since (a branch switch) must not serve a stale one.
    if (ensureReferenceBundle())
      say("refreshed the API reference's renderer (public/docs/vendor/)");
    // The console's bundle, rebuilt when its sources (or the client's) are newer than it.
    if (await ensureConsoleBuild()) say("built the console (public/console/assets/)");

    const databaseUrl = process.env.DATABASE_URL;
    const database = databaseUrl
      ? `PostgreSQL ${redactDatabaseUrl(databaseUrl)} (as is)`
      : `PGlite ${shown(paths.pglite)}`;
    say(`starting the SQL endpoint: ${database}`);
    const starting = startSqlEndpoint({
      databaseUrl,
      dataDir: databaseUrl ? undefined : paths.pglite,
      fresh: false,
      migrationsFolder: join(REPO_ROOT, "drizzle"),
      log: (line) => process.stdout.write(`[sql] ${line.replace(/^sql-endpoint: /, "")}\n`),
      // An injected round trip per SQL request, to feel a distant database (docs/latency.md).
      dbRtt: process.env.DB_RTT || undefined,
    });
    // Registered before awaiting: a stop during migrations still closes PGlite once it opened.
    cleanups.push(async () => (await starting.catch(() => undefined))?.close());
    const endpoint = await unlessStopped(starting);
    if (!endpoint) return (await stopRequested).code;

    // Stripe: the developer's own STRIPE_API_BASE in .dev.vars (a Stripe test account), else
    // the local stand-in on loopback, with the keys .dev.vars was given.
    const vars = readDevVars(paths.devVars);
    let stripeApiBase: string | undefined;
    let stripe = `${vars?.get("STRIPE_API_BASE")} (STRIPE_API_BASE in ${shown(paths.devVars)})`;
    if (!vars?.get("STRIPE_API_BASE")) {
      const standIn = await startStripeStandIn(HOST, {
        secretKey: vars?.get("STRIPE_SECRET_KEY") ?? "",
        webhookSecret: vars?.get("STRIPE_WEBHOOK_SECRET") ?? "",
      });
      cleanups.push(() => standIn.close());
      stripeApiBase = standIn.url;
      stripe = `${standIn.url} (local stand-in; docs/billing.md, "Locally")`;
    }

    say(`starting wrangler dev on ${origin}`);
    const child = spawnGroup(
      "wrangler",
      process.execPath,
      wranglerArgs(
        paths,
        port,
        localDatabaseUrl(endpoint.url),
        publicBaseUrlOf(paths, origin),
        stripeApiBase,
      ),
      { cwd: REPO_ROOT, env: wranglerEnv() },
    );
    wrangler = child;
    cleanups.push(() => child.stop());
    void child.exited.then(({ code, signal }) => {
      const how = signal ? `signal ${signal}` : `code ${code}`;
      requestStop({ code: 1, reason: `wrangler exited unexpectedly (${how})` });
    });

    await waitForOk(`${origin}/health`, {
      signal: aborter.signal,
      slowAfterMs: SLOW_START_MS,
      onSlow: () => warn(`${origin}/health does not answer yet: see the wrangler output above`),
    });
    printReady(
      origin,
      idpServer.url,
      paths,
      `${database} via ${endpoint.url}`,
      stripe,
      ((Date.now() - startedAt) / 1000).toFixed(1),
    );
    return (await stopRequested).code;
  } catch (error) {
    if (stopping) return (await stopRequested).code; // e.g. the health wait, aborted by the stop
    if (error instanceof MigrationHistoryError) {
      for (const line of staleDatabaseAdvice(error, paths)) warn(line);
      return 1;
    }
    warn(error instanceof Error ? error.message : String(error));
    return 1;
  } finally {
    markStopping();
    const request = await Promise.race([stopRequested, Promise.resolve(undefined)]);
    if (request?.code) warn(request.reason);
    else if (request) say(request.reason);
    // In reverse: the Worker stops before the database it talks to; the lock goes last.
    for (const cleanup of cleanups.reverse()) {
      try {
        await cleanup();
      } catch (error) {
        warn(`while stopping: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
  }
}

main().then(
  (code) => {
    if (code === 0) say("stopped");
    process.exit(code);
  },
  (error: unknown) => {
    warn(error instanceof Error ? error.message : String(error));
    process.exit(1);
  },
);
