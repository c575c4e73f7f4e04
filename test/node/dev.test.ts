/**
 * `npm run dev` end to end, as a developer uses it: start, mint a session with `npm run token`,
 * sign up, create a key, call with it; stop with SIGTERM (exit 0, no workerd left, database
 * closed cleanly); start again and find the same data and the same signing key.
 *
 * It runs against an isolated state directory (DEV_STATE_DIR) on a free port, so the
 * developer's own `.dev.vars` and `.data/` are never touched. With DATABASE_URL set (CI's second
 * pass) the dev server gets a fresh database on that server, dropped at the end.
 * SKIP_DEV_TEST=1 skips it (it starts wrangler twice: 10-30 s).
 */
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { promisify } from "node:util";
import { PGlite } from "@electric-sql/pglite";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createFreshDatabase, type FreshDatabase } from "../../scripts/sql-endpoint/fresh-database";
import { freePort, survivors } from "../support/processes";

const REPO = resolve(import.meta.dirname, "../..");
const READY_TIMEOUT_MS = 90_000;
const STOP_TIMEOUT_MS = 15_000;

interface DevServer {
  child: ChildProcess;
  output: () => string;
}

// Linux only: it reads /proc to prove that no process of the dev server survived a stop.
const skip = process.env.SKIP_DEV_TEST === "1" || process.platform !== "linux";

describe.skipIf(skip)("npm run dev", () => {
  let stateDir = "";
  let port = 0;
  let origin = "";
  let fresh: FreshDatabase | undefined;
  const started: ChildProcess[] = [];

  function devEnv(): NodeJS.ProcessEnv {
    const env: NodeJS.ProcessEnv = { ...process.env, DEV_STATE_DIR: stateDir, PORT: String(port) };
    // A developer's shell, not vitest's: no test-mode switches leak into wrangler or miniflare.
    for (const key of Object.keys(env)) {
      if (key.startsWith("VITEST") || key === "NODE_ENV") delete env[key];
    }
    delete env.PUBLIC_BASE_URL; // the default (the server's own address) is what is tested
    if (fresh) env.DATABASE_URL = fresh.url;
    else delete env.DATABASE_URL;
    return env;
  }

  function startDev(): DevServer {
    // npm itself, as the developer runs it: its signal forwarding is part of what is tested.
    const child = spawn("npm", ["run", "dev"], {
      cwd: REPO,
      env: devEnv(),
      detached: true, // a group of its own, for the last-resort kill in afterAll
      stdio: ["ignore", "pipe", "pipe"],
    });
    started.push(child);
    let output = "";
    child.stdout?.on("data", (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.stderr?.on("data", (chunk: Buffer) => {
      output += chunk.toString();
    });
    return { child, output: () => output };
  }

  async function waitReady(dev: DevServer): Promise<void> {
    const deadline = Date.now() + READY_TIMEOUT_MS;
    while (Date.now() < deadline) {
      if (dev.child.exitCode !== null) {
        throw new Error(`npm run dev exited (${dev.child.exitCode}):\n${dev.output()}`);
      }
      try {
        const response = await fetch(`${origin}/health`, { signal: AbortSignal.timeout(2_000) });
        if (response.status === 200) return;
      } catch {
        // not up yet
      }
      await sleep(250);
    }
    throw new Error(`/health not ready after ${READY_TIMEOUT_MS} ms:\n${dev.output()}`);
  }

  async function stopDev(dev: DevServer): Promise<number | null> {
    const exited = once(dev.child, "exit");
    dev.child.kill("SIGTERM");
    const result = await Promise.race([exited, sleep(STOP_TIMEOUT_MS, "timeout" as const)]);
    if (result === "timeout") {
      throw new Error(`no exit within ${STOP_TIMEOUT_MS} ms:\n${dev.output()}`);
    }
    return dev.child.exitCode;
  }

  async function token(user: string): Promise<string> {
    const { stdout } = await promisify(execFile)(
      "npm",
      ["run", "-s", "token", "--", "--sub", user],
      { cwd: REPO, env: devEnv() },
    );
    return stdout.trim().split("\n").at(-1) ?? "";
  }

  async function call(
    path: string,
    init: { method?: string; headers?: Record<string, string>; body?: unknown } = {},
  ) {
    const response = await fetch(`${origin}${path}`, {
      method: init.method ?? "GET",
      headers: { ...(init.body ? { "content-type": "application/json" } : {}), ...init.headers },
      body: init.body ? JSON.stringify(init.body) : undefined,
    });
    const text = await response.text();
    return { status: response.status, json: text ? JSON.parse(text) : undefined, text };
  }

  beforeAll(async () => {
    stateDir = mkdtempSync(join(tmpdir(), "agent-risk-dev-"));
    port = await freePort();
    origin = `http://127.0.0.1:${port}`;
    if (process.env.DATABASE_URL) fresh = await createFreshDatabase(process.env.DATABASE_URL);
  });

  afterAll(async () => {
    // Whatever happened above: nothing this test started may outlive it.
    for (const child of started) {
      if (child.exitCode === null && child.signalCode === null && child.pid) {
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
  }, 30_000);

  it("serves the API, stops cleanly on SIGTERM and keeps data and keys across restarts", async () => {
    // First run: creates the state, then the sign-up path of the README.
    const first = startDev();
    await waitReady(first);

    const devVars = join(stateDir, ".dev.vars");
    expect(statSync(devVars).mode & 0o777).toBe(0o600);
    const vars = readFileSync(devVars, "utf8");
    for (const key of [
      "SIGNING_KEY",
      "SIGNING_KEY_ES256",
      "IDP_ISSUER",
      "IDP_AUDIENCE",
      "IDP_JWKS",
      "ENVIRONMENT",
    ]) {
      expect(vars).toMatch(new RegExp(`^${key}=`, "m"));
    }
    // The IdP's private key stays out of the Worker's bindings: only `npm run token` has it.
    const idp = JSON.parse(readFileSync(join(stateDir, ".data", "local-idp.json"), "utf8"));
    expect(idp.privateJwk.d).toBeTruthy();
    expect(vars).not.toContain(idp.privateJwk.d);

    const session = await token("dev-test-alice");
    expect(session.split(".")).toHaveLength(3);
    const org = await call("/v1/orgs", {
      method: "POST",
      headers: { authorization: `Bearer ${session}` },
    });
    expect(org.status, org.text).toBe(201);
    const created = await call("/v1/api-keys", {
      method: "POST",
      headers: { authorization: `Bearer ${session}` },
      body: { name: "k", scopes: ["assess:read"] },
    });
    expect(created.status, created.text).toBe(201);
    const key: string = created.json.key;
    const me = await call("/v1/me", { headers: { "x-api-key": key } });
    expect(me.status, me.text).toBe(200);
    expect(me.json.orgId).toBe(org.json.id);
    const jwks = await call("/.well-known/jwks.json");
    expect(jwks.status).toBe(200);
    const kid: string = jwks.json.keys[0].kid;
    // Both keys generated into .dev.vars are published (docs/architecture.md, issue 42).
    expect(jwks.json.keys.map((k: { alg: string }) => k.alg)).toEqual(["EdDSA", "ES256"]);
    // PUBLIC_BASE_URL defaults to the dev server's own address: the service names itself.
    const trustList = await call("/v1/trust-list");
    expect(trustList.status, trustList.text).toBe(200);
    expect(trustList.json.issuer).toBe(origin);

    // Billing walks through locally (docs/billing.md, "Locally"): the Stripe stand-in on
    // loopback, keys defaulted in .dev.vars; checkout, the signed webhook, the plan changed.
    expect(vars).toMatch(/^STRIPE_SECRET_KEY=sk_test_local_\w+$/m);
    expect(vars).toMatch(/^STRIPE_WEBHOOK_SECRET=whsec_[\w-]+$/m);
    const stripeUrl = /Stripe {4}(http:\/\/127\.0\.0\.1:\d+) \(local stand-in/.exec(
      first.output(),
    )?.[1];
    expect(stripeUrl, first.output()).toBeDefined();
    const billingKey = await call("/v1/api-keys", {
      method: "POST",
      headers: { authorization: `Bearer ${session}` },
      body: { name: "billing", scopes: ["assess:read", "assess:write"] },
    });
    const billingHeaders = { "x-api-key": billingKey.json.key as string };
    const checkout = await call("/v1/billing/checkout", {
      method: "POST",
      headers: billingHeaders,
      body: { plan: "starter", success_url: `${origin}/done`, cancel_url: `${origin}/billing` },
    });
    expect(checkout.status, checkout.text).toBe(201);
    const paid = await fetch(`${stripeUrl}/_events/checkout.session.completed`, {
      method: "POST",
      body: JSON.stringify({ session: checkout.json.id }),
    });
    const event = (await paid.json()) as { payload: string; signature: string };
    const unsigned = await fetch(`${origin}/v1/billing/webhooks/stripe`, {
      method: "POST",
      body: event.payload,
    });
    expect(unsigned.status).toBe(400);
    const hook = await fetch(`${origin}/v1/billing/webhooks/stripe`, {
      method: "POST",
      headers: { "stripe-signature": event.signature },
      body: event.payload,
    });
    expect(hook.status, await hook.clone().text()).toBe(200);
    expect(await hook.json()).toEqual({ received: true, duplicate: false });
    const billing = await call("/v1/billing", { headers: billingHeaders });
    expect(billing.json.plan.id).toBe("starter");

    // No secret reaches the terminal.
    const signingKey = JSON.parse(vars.match(/^SIGNING_KEY='(.*)'$/m)?.[1] ?? "{}");
    expect(signingKey.d).toBeTruthy();
    expect(first.output()).not.toContain(signingKey.d);
    const es256Key = JSON.parse(vars.match(/^SIGNING_KEY_ES256='(.*)'$/m)?.[1] ?? "{}");
    expect(es256Key).toMatchObject({ kty: "EC", crv: "P-256" });
    expect(first.output()).not.toContain(es256Key.d);

    // SIGTERM to npm: exit 0, nothing left running, PGlite closed (reopenable, no stale lock).
    expect(await stopDev(first), first.output()).toBe(0);
    expect(survivors(stateDir).map((p) => `${p.pid} ${p.args}`)).toEqual([]);
    expect(existsSync(join(stateDir, ".data", "dev.pid"))).toBe(false);
    if (!fresh) {
      const pglite = join(stateDir, ".data", "pglite");
      expect(existsSync(join(pglite, "postmaster.pid"))).toBe(false);
      const db = await PGlite.create(pglite);
      const { rows } = await db.query<{ n: number }>(
        "select count(*)::int as n from organizations where id = $1",
        [org.json.id],
      );
      await db.close();
      expect(rows[0]?.n).toBe(1);
    }

    // Second run: same state, same keys, same data; the first session is still valid.
    const second = startDev();
    await waitReady(second);
    const again = await call("/v1/me", { headers: { "x-api-key": key } });
    expect(again.status, again.text).toBe(200);
    expect(again.json.orgId).toBe(org.json.id);
    const asUser = await call("/v1/me", { headers: { authorization: `Bearer ${session}` } });
    expect(asUser.status, asUser.text).toBe(200);
    const jwksAgain = await call("/.well-known/jwks.json");
    expect(jwksAgain.json.keys[0].kid).toBe(kid);
    expect(second.output()).not.toMatch(/created .*\.dev\.vars/);

    expect(await stopDev(second), second.output()).toBe(0);
    expect(survivors(stateDir).map((p) => `${p.pid} ${p.args}`)).toEqual([]);
  }, 240_000);
});
