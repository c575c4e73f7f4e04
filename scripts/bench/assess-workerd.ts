/**
 * The Worker under plain workerd, as Miniflare runs it (the way `bench:ledger` does): the same
 * deployable bundle `wrangler dev` would serve, but without wrangler's proxy Worker, its
 * inspector and its Node process in the path, so the CPU the workerd process spends per
 * request is the Worker's and its Durable Object's (plus Miniflare's small entry Worker, which a
 * `GET /health` pays too and the baseline removes; its outbound header-stripping Worker, which
 * only the requests that reach the database would pay, is turned off). Bindings mirror
 * wrangler.toml.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { Log, LogLevel, Miniflare } from "miniflare";
import { readDevVars } from "../dev-vars.ts";
import type { Run } from "./harness.ts";
import { withoutSignalHooks } from "./harness.ts";

const COMPATIBILITY_DATE = "2026-04-26"; // as wrangler.toml

// wrangler.toml's [[ratelimits]], so a request pays the same limiter calls as in production.
const RATE_LIMITS = {
  RATE_LIMIT_ASSESS: { simple: { limit: 3000, period: 10 as const } },
  RATE_LIMIT_WRITE: { simple: { limit: 600, period: 10 as const } },
  RATE_LIMIT_EXPENSIVE: { simple: { limit: 30, period: 60 as const } },
  RATE_LIMIT_PUBLIC: { simple: { limit: 300, period: 60 as const } },
  RATE_LIMIT_FAILED_AUTH: { simple: { limit: 60, period: 60 as const } },
};

/**
 * wrangler.toml's Queues: the producers' bindings and the consumers' settings, so training and
 * network contributions run here as under `wrangler dev` (test/node/bench-workerd-queues.test.ts
 * keeps the two equal).
 */
export const QUEUE_PRODUCERS = {
  WEBHOOK_QUEUE: "webhook-deliveries",
  TRAINING_QUEUE: "risk-model-training",
  NETWORK_QUEUE: "network-contributions",
};
export const QUEUE_CONSUMERS = {
  "webhook-deliveries": {
    maxBatchSize: 10,
    maxBatchTimeout: 1,
    maxRetries: 10,
    deadLetterQueue: "webhook-deliveries-dlq",
  },
  "webhook-deliveries-dlq": { maxBatchSize: 10, maxBatchTimeout: 1, maxRetries: 3 },
  "risk-model-training": {
    maxBatchSize: 1,
    maxBatchTimeout: 1,
    maxRetries: 3,
    deadLetterQueue: "risk-model-training-dlq",
  },
  "risk-model-training-dlq": { maxBatchSize: 10, maxBatchTimeout: 1, maxRetries: 3 },
  "network-contributions": { maxBatchSize: 10, maxBatchTimeout: 1, maxRetries: 3 },
};

/**
 * Serves `script` (a bundle of workers/main.ts) on `host`:`port` with the variables of
 * `devVars` plus `vars`; registered with `run.defer`. Answers the origin.
 */
export async function startWorkerd(options: {
  script: string;
  devVars: string;
  vars: Record<string, string>;
  host: string;
  port: number;
  run: Run;
  /** workerd's V8 inspector on this port (`--profile`); none without it. */
  inspectorPort?: number;
  /** Consume the Queues too (training, network contributions, webhooks), as `wrangler dev` does. */
  queues?: boolean;
}): Promise<string> {
  const { run } = options;
  const bindings = { ...Object.fromEntries(readDevVars(options.devVars) ?? []), ...options.vars };
  // Miniflare names its temp dir (the DOs' SQLite files) after os.tmpdir() when constructed and
  // removes it fire-and-forget on dispose(): give it a parent of ours, removed by us.
  const mfTmp = mkdtempSync(join(tmpdir(), "bench-assess-workerd-"));
  run.defer(() => rmSync(mfTmp, { recursive: true, force: true }));
  const previousTmp = process.env.TMPDIR;
  process.env.TMPDIR = mfTmp;
  let mf: Miniflare;
  try {
    // Without its exit hook, which would skip our cleanups on Ctrl-C: the harness disposes of it.
    mf = withoutSignalHooks(
      () =>
        new Miniflare({
          log: new Log(LogLevel.WARN),
          cf: false, // no fetch of Request.cf data from the Internet
          host: options.host,
          port: options.port,
          ...(options.inspectorPort === undefined ? {} : { inspectorPort: options.inspectorPort }),
          modules: true,
          scriptPath: options.script,
          // Module names are paths below this root; the build lives outside the working directory.
          modulesRoot: dirname(options.script),
          compatibilityDate: COMPATIBILITY_DATE,
          compatibilityFlags: ["nodejs_compat"],
          durableObjects: { ORG_LEDGER: { className: "OrgLedger", useSQLite: true } },
          queueProducers: QUEUE_PRODUCERS,
          ...(options.queues ? { queueConsumers: QUEUE_CONSUMERS } : {}),
          ratelimits: RATE_LIMITS,
          // Miniflare otherwise routes every outbound fetch (each database round trip) through a
          // JavaScript Worker of its own that copies the request to drop `CF-Connecting-IP`:
          // an emulation of what Cloudflare's edge does natively, and a quarter of the workerd
          // process's samples in a fresh assessment's profile, none of it the Worker's.
          stripCfConnectingIp: false,
          bindings,
        }),
    );
  } finally {
    if (previousTmp === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = previousTmp;
  }
  run.defer(() => mf.dispose());
  const url = await mf.ready;
  return url.origin;
}
