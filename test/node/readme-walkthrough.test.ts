/**
 * The README's walk-through, run as written: every ```sh block of README.md, in order, in one
 * bash, against `npm run dev` started the way the README starts it. Only addresses change: the
 * dev server runs on a free port (8787 may be taken) and the webhook receiver on another (3000
 * likewise), and `npm run token` reads this server's state (DEV_STATE_DIR). The snippets stop
 * on an error body themselves (`ok`), so any refused step fails the script, and the script
 * fails the test; the end is the merchant check's APPROVED, and the receiver's delivery.
 *
 * With DATABASE_URL set (CI's second pass) the dev server gets a fresh database on that server,
 * dropped at the end. Linux only, like test/node/dev.test.ts (it reads /proc to leave nothing
 * running). SKIP_DEV_TEST=1 skips it.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createFreshDatabase, type FreshDatabase } from "../../scripts/sql-endpoint/fresh-database";
import { freePort, survivors } from "../support/processes";

const REPO = resolve(import.meta.dirname, "../..");
const READY_TIMEOUT_MS = 90_000;
const SCRIPT_TIMEOUT_MS = 150_000;
const DELIVERY_TIMEOUT_MS = 30_000;
const STOP_TIMEOUT_MS = 15_000;

/** The README's ```sh blocks, in order. */
function shellBlocks(markdown: string): string[] {
  return [...markdown.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((m) => m[1] as string);
}

const skip = process.env.SKIP_DEV_TEST === "1" || process.platform !== "linux";

describe.skipIf(skip)("the README's walk-through", () => {
  let stateDir = "";
  let fresh: FreshDatabase | undefined;
  const started: ChildProcess[] = [];

  /** A developer's shell: this server's state, none of vitest's switches. */
  function shellEnv(port: number): NodeJS.ProcessEnv {
    const env: NodeJS.ProcessEnv = { ...process.env, DEV_STATE_DIR: stateDir, PORT: String(port) };
    for (const key of Object.keys(env)) {
      if (key.startsWith("VITEST") || key === "NODE_ENV") delete env[key];
    }
    delete env.PUBLIC_BASE_URL;
    if (fresh) env.DATABASE_URL = fresh.url;
    else delete env.DATABASE_URL;
    return env;
  }

  function run(command: string, args: string[], env: NodeJS.ProcessEnv) {
    const child = spawn(command, args, {
      cwd: REPO,
      env,
      detached: true, // a group of its own: the background receiver dies with it at the end
      stdio: ["ignore", "pipe", "pipe"],
    });
    started.push(child);
    const out = { stdout: "", stderr: "" };
    child.stdout?.on("data", (chunk: Buffer) => {
      out.stdout += chunk.toString();
    });
    child.stderr?.on("data", (chunk: Buffer) => {
      out.stderr += chunk.toString();
    });
    return { child, out };
  }

  beforeAll(async () => {
    stateDir = mkdtempSync(join(tmpdir(), "agent-risk-readme-"));
    if (process.env.DATABASE_URL) fresh = await createFreshDatabase(process.env.DATABASE_URL);
  });

  afterAll(async () => {
    // The dev server first, by SIGTERM as a developer's Ctrl-C: dev.ts then stops wrangler's
    // own process group. A SIGKILL would orphan wrangler's workerd, which spins on a core.
    for (const child of started) {
      if (child.exitCode !== null || child.signalCode !== null) continue;
      const exited = once(child, "exit");
      child.kill("SIGTERM");
      await Promise.race([exited, sleep(STOP_TIMEOUT_MS)]);
    }
    // Then every group, whatever is left in it (the receiver the walk left in the background).
    for (const child of started) {
      if (child.pid) {
        try {
          process.kill(-child.pid, "SIGKILL");
        } catch {
          // already gone
        }
      }
    }
    if (stateDir) {
      for (const { pid } of survivors(stateDir)) process.kill(pid, "SIGKILL");
      rmSync(stateDir, { recursive: true, force: true });
    }
    await fresh?.drop();
  }, 60_000);

  it("runs every sh block as written against npm run dev and ends APPROVED", async () => {
    const blocks = shellBlocks(readFileSync(join(REPO, "README.md"), "utf8"));
    // The walk-through, the credential, the examples: a README that lost one is caught here.
    expect(blocks).toHaveLength(3);
    const port = await freePort();
    const origin = `http://127.0.0.1:${port}`;
    const receiverPort = await freePort();
    const script = blocks
      .join("\n")
      .replaceAll("http://127.0.0.1:8787", origin)
      .replaceAll("127.0.0.1:3000", `127.0.0.1:${receiverPort}`)
      .replaceAll("PORT=3000", `PORT=${receiverPort}`);
    // Nothing else of the README's may name those ports, or it would escape the substitution.
    expect(script).not.toMatch(/\b(8787|3000)\b/);

    const dev = run("npm", ["run", "dev"], shellEnv(port));
    const deadline = Date.now() + READY_TIMEOUT_MS;
    for (;;) {
      if (dev.child.exitCode !== null) {
        throw new Error(`npm run dev exited (${dev.child.exitCode}):\n${dev.out.stdout}`);
      }
      const up = await fetch(`${origin}/health`, { signal: AbortSignal.timeout(2_000) }).then(
        (r) => r.status === 200,
        () => false,
      );
      if (up) break;
      if (Date.now() > deadline) throw new Error(`no /health:\n${dev.out.stdout}`);
      await sleep(250);
    }

    // One bash, as a person pasting the blocks one after the other would have, except that it
    // stops at the first failure instead of carrying on. Then, the test's own: the README says
    // the check without a file stops, with the reason, and exits 1 (not 2: it could check).
    const again = `again=0
RISK_URL=${origin} RISK_API_KEY=$KEY MERCHANT_ID=m-1 \\
  npm start -s --workspace @agent-risk/example-merchant-check || again=$?
echo "again: exit $again"`;
    const walk = run("bash", ["-c", `set -eo pipefail\n${script}\n${again}`], shellEnv(port));
    const exited = once(walk.child, "exit");
    const result = await Promise.race([exited, sleep(SCRIPT_TIMEOUT_MS, "timeout" as const)]);
    const transcript = () => `stdout:\n${walk.out.stdout}\nstderr:\n${walk.out.stderr}`;
    expect(result, transcript()).not.toBe("timeout");
    expect(walk.child.exitCode, transcript()).toBe(0);

    // The webhook receiver runs in the background on the same stdout: its lines (`<event type>
    // <id> <json>`) land between the script's whenever a delivery arrives, so they are read apart.
    const delivery = /^[a-z_]+\.[a-z_]+ \S+ \{/;
    const lines = walk.out.stdout.split("\n").filter((l) => !delivery.test(l));
    // Step 10: the credential verified.
    expect(lines.some((l) => /^\{"verified":true,.*"hops":2,"failure":null\}$/.test(l))).toBe(true);
    // The merchant check: its verdict, then APPROVED, and no line of npm's own.
    const verdict = lines.findIndex((l) =>
      /^assessment [0-9a-f-]{36}: approve \(score \d+\)$/.test(l),
    );
    expect(verdict, transcript()).toBeGreaterThan(-1);
    expect(lines[verdict + 1]).toBe("APPROVED: verified offline; go ahead and charge");
    const stop = lines.findIndex((l) => /^assessment [0-9a-f-]{36}: review \(score \d+\)$/.test(l));
    expect(stop, transcript()).toBeGreaterThan(verdict);
    expect(lines[stop + 1]).toMatch(/^STOP: decision review, score \d+: Review: .+\.$/);
    expect(lines[stop + 2]).toBe("again: exit 1");
    expect(walk.out.stderr, transcript()).not.toMatch(/npm (error|ERR)/);

    // The receiver, still running in the background, accepts the checkout's delivery.
    const delivered = () =>
      /^assessment\.completed \S+ .*"decision":"approve"/m.test(walk.out.stdout);
    const until = Date.now() + DELIVERY_TIMEOUT_MS;
    while (!delivered() && Date.now() < until) await sleep(250);
    expect(delivered(), transcript()).toBe(true);
  }, 300_000);
});
