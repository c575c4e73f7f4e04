import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { base64url } from "#audit/encoding";
import type { Env } from "../../src/env";
import worker from "../../workers/main";
import { BASE, call, newOrg, sessionToken } from "./support/api";
import { errorBody, refusedBody } from "./support/errors";

// docs/api.md, "Rate limits", failed authentications: the door is bound here to TEST_RATE_LIMIT
// (20 a minute); the rest of the suite binds it far above what it sends (vitest.config.ts).

const LIMIT = 20;

/** One request to the Worker with the failed-authentication door bound to the small limiter. */
async function through(path: string, headers: Record<string, string>) {
  const ctx = createExecutionContext();
  const bound = { ...env, RATE_LIMIT_FAILED_AUTH: env.TEST_RATE_LIMIT } as Env;
  const res = await worker.fetch(new Request(`${BASE}${path}`, { headers }), bound, ctx);
  await waitOnExecutionContext(ctx);
  const text = await res.text();
  return { status: res.status, headers: res.headers, json: text ? JSON.parse(text) : undefined };
}

/** A key in the key format that was never issued: 256 random bits. */
function madeUpKey(): string {
  return `aar_live_${base64url(crypto.getRandomValues(new Uint8Array(32)))}`;
}

function randomIp(): string {
  return `198.18.${Math.floor(Math.random() * 250) + 1}.${Math.floor(Math.random() * 250) + 1}`;
}

/** The SQL endpoint's counters (shadow-policies.test.ts reads the same). */
async function endpointStats(): Promise<{ requests: number; statements: number }> {
  const url = new URL(env.DATABASE_URL as string);
  return (await fetch(`http://${url.host}/stats`)).json();
}

/**
 * The fewest statements one request cost over a few tries: other test files may share the
 * endpoint, and can only add to its counts.
 */
async function statementsOf(send: () => Promise<{ status: number }>, expected: number) {
  let fewest = Number.POSITIVE_INFINITY;
  for (let n = 0; n < 3; n++) {
    const before = await endpointStats();
    const res = await send();
    const after = await endpointStats();
    expect(res.status).toBe(expected);
    fewest = Math.min(fewest, after.statements - before.statements);
  }
  return fewest;
}

/**
 * The limiter counts in fixed one-minute windows: start where the requests below (a few dozen)
 * all fall in one, so the window's end cannot reset the count halfway.
 */
async function freshWindow() {
  const into = Date.now() % 60_000;
  if (into > 30_000) await new Promise((resolve) => setTimeout(resolve, 60_500 - into));
}

function expectLimited(res: Awaited<ReturnType<typeof through>>) {
  expect(res.status).toBe(429);
  const retryAfter = Number(res.headers.get("retry-after"));
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(60);
  expect(res.json).toEqual(
    errorBody(
      "rate_limited",
      { limit: "failed_auth", period_seconds: 60, retry_after_seconds: retryAfter },
      "Too many failed authentications from this client or with this key: wait the Retry-After seconds, then try again with a valid credential.",
    ),
  );
}

// Up to half a minute waiting for a fresh window, then the requests.
describe("failed authentications, per client IP", { timeout: 120_000 }, () => {
  it("a client rotating made-up keys is refused before any lookup once past the limit", async () => {
    const org = await newOrg();
    const { key: valid } = await org.key(["assess:read"]);
    await freshWindow();
    const ip = randomIp();
    const from = (key: string, at = ip) => ({ "x-api-key": key, "cf-connecting-ip": at });

    // The limit's worth of failures, and the one whose count goes past it: each looked up, 401.
    for (let i = 0; i <= LIMIT; i++) {
      const res = await through("/v1/me", from(madeUpKey()));
      expect(res.status, `failure ${i + 1}`).toBe(401);
      expect(res.json).toEqual(refusedBody("unknown_key"));
    }
    // The next one, and every one after it in the window: 429, and not a statement run for it.
    const next = await through("/v1/me", from(madeUpKey()));
    expectLimited(next);
    expect(await statementsOf(() => through("/v1/me", from(madeUpKey())), 429)).toBe(0);
    // A valid key from that address cannot be told apart before the lookup: refused too.
    expectLimited(await through("/v1/me", from(valid)));

    // Another client is not held back: its made-up key is looked up (the statements the blocked
    // ones did not cost) and refused as usual, and a valid key from another address works.
    const elsewhere = () => through("/v1/me", from(madeUpKey(), randomIp()));
    expect((await elsewhere()).json).toEqual(refusedBody("unknown_key"));
    expect(await statementsOf(elsewhere, 401)).toBeGreaterThan(0);
    const other = await through("/v1/me", from(valid, randomIp()));
    expect(other.status).toBe(200);
    expect(other.json.orgId).toBe(org.id);
  });

  it("counts malformed keys and forged session tokens, which cost no lookup, the same way", async () => {
    await freshWindow();
    const ip = randomIp();
    for (let i = 0; i <= LIMIT; i++) {
      const headers: Record<string, string> =
        i % 2 === 0
          ? { "x-api-key": "aar_live_short", "cf-connecting-ip": ip }
          : { authorization: "Bearer not.a.jwt", "cf-connecting-ip": ip };
      expect((await through("/v1/me", headers)).status).toBe(401);
    }
    expectLimited(await through("/v1/me", { "x-api-key": madeUpKey(), "cf-connecting-ip": ip }));
  });

  it("counts refused credentials only: not a request without one, nor an expired session", async () => {
    const expired = await sessionToken({}, { expiresIn: "-1m" });
    await freshWindow();
    const ip = randomIp();
    for (let i = 0; i <= LIMIT; i++) {
      const none = await through("/v1/me", { "cf-connecting-ip": ip });
      expect(none.json).toEqual(refusedBody("missing"));
      const stale = await through("/v1/me", {
        authorization: `Bearer ${expired}`,
        "cf-connecting-ip": ip,
      });
      expect(stale.json).toEqual(refusedBody("expired_session"));
    }
    // None of those counted: the made-up keys still get the whole limit, and one more.
    for (let i = 0; i <= LIMIT; i++) {
      const res = await through("/v1/me", { "x-api-key": madeUpKey(), "cf-connecting-ip": ip });
      expect(res.status, `failure ${i + 1}`).toBe(401);
    }
    expectLimited(await through("/v1/me", { "cf-connecting-ip": ip, "x-api-key": madeUpKey() }));
  });
});

describe("failed authentications, per key", { timeout: 120_000 }, () => {
  it("a revoked key retried from many addresses is refused before any lookup", async () => {
    const org = await newOrg();
    const { id, key } = await org.key(["assess:read"]);
    const revoked = await call(`/v1/api-keys/${id}/revoke`, { method: "POST", token: org.token });
    expect(revoked.status).toBe(200);
    await freshWindow();
    for (let i = 0; i <= LIMIT; i++) {
      const res = await through("/v1/me", { "x-api-key": key, "cf-connecting-ip": randomIp() });
      expect(res.status, `failure ${i + 1}`).toBe(401);
    }
    const send = () => through("/v1/me", { "x-api-key": key, "cf-connecting-ip": randomIp() });
    expectLimited(await send());
    expect(await statementsOf(send, 429)).toBe(0);
    // Only that key: another made-up key from a fresh address is looked up as usual.
    const other = await through("/v1/me", {
      "x-api-key": madeUpKey(),
      "cf-connecting-ip": randomIp(),
    });
    expect(other.json).toEqual(refusedBody("unknown_key"));
  });
});
