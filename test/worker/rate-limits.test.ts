import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { Env } from "../../src/env";
import worker from "../../workers/main";
import { BASE } from "./support/api";
import { orgWithKey, payment } from "./support/assess";
import { errorBody } from "./support/errors";

// The suite's own doors are configured far above anything it sends (vitest.config.ts); here
// one door at a time is bound to a small limiter, TEST_RATE_LIMIT (20 a minute), or to
// TEST_RATE_LIMIT_PUBLIC, the production value of the public door (300 a minute).

type Door = "RATE_LIMIT_ASSESS" | "RATE_LIMIT_WRITE" | "RATE_LIMIT_EXPENSIVE" | "RATE_LIMIT_PUBLIC";

/** One request to the Worker with `door` bound to `limiter`. */
async function through(
  door: Door,
  path: string,
  init: RequestInit = {},
  limiter: RateLimit = env.TEST_RATE_LIMIT,
) {
  const ctx = createExecutionContext();
  const bound = { ...env, [door]: limiter } as Env;
  const res = await worker.fetch(new Request(`${BASE}${path}`, init), bound, ctx);
  await waitOnExecutionContext(ctx);
  const text = await res.text();
  return { status: res.status, headers: res.headers, json: text ? JSON.parse(text) : undefined };
}

type Answer = Awaited<ReturnType<typeof through>>;

function expectLimited(answers: Answer[], period: number) {
  const limited = answers.filter((a) => a.status === 429);
  expect(limited.length).toBeGreaterThan(0);
  for (const a of limited) {
    const retryAfter = Number(a.headers.get("retry-after"));
    expect(Number.isInteger(retryAfter)).toBe(true);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(period);
    expect(a.json).toEqual(
      errorBody(
        "rate_limited",
        expect.objectContaining({ period_seconds: period, retry_after_seconds: retryAfter }),
      ),
    );
  }
  return limited.length;
}

function post(key: string, body: unknown): RequestInit {
  return {
    method: "POST",
    headers: { "x-api-key": key, "content-type": "application/json" },
    body: JSON.stringify(body),
  };
}

// More than twice the small limit: however the requests fall across two windows, one holds more.
const OVER = 45;

describe("per client IP on public routes", () => {
  it("limits a burst of 1,000 requests from one client at the production limit", async () => {
    const ip = `198.51.100.${Math.floor(Math.random() * 250) + 1}`;
    const logId = crypto.randomUUID().replaceAll("-", "");
    const answers: Answer[] = [];
    for (let i = 0; i < 1000; i += 50) {
      const wave = Array.from({ length: 50 }, () =>
        through(
          "RATE_LIMIT_PUBLIC",
          `/v1/transparency/logs/${logId}`,
          { headers: { "cf-connecting-ip": ip } },
          env.TEST_RATE_LIMIT_PUBLIC,
        ),
      );
      answers.push(...(await Promise.all(wave)));
    }
    const limited = expectLimited(answers, 60);
    // Everything else was answered, not limited: the unknown log is a 404.
    expect(answers.filter((a) => a.status !== 429).every((a) => a.status === 404)).toBe(true);
    expect(limited).toBeGreaterThanOrEqual(1000 - 2 * 300);
    console.log(`public burst: ${limited} of 1000 answered 429`);

    // Another client is not held back by the first one's limit.
    const other = await through(
      "RATE_LIMIT_PUBLIC",
      `/v1/transparency/logs/${logId}`,
      { headers: { "cf-connecting-ip": "203.0.113.7" } },
      env.TEST_RATE_LIMIT_PUBLIC,
    );
    expect(other.status).toBe(404);
  });

  it("limits the trust list and artifact verification the same way", async () => {
    const ip = `192.0.2.${Math.floor(Math.random() * 250) + 1}`;
    const headers = { "cf-connecting-ip": ip };
    const digest = `sha256:${"ab".repeat(32)}`;
    const verify = await Promise.all(
      Array.from({ length: OVER }, () =>
        through("RATE_LIMIT_PUBLIC", `/v1/verify/artifact?digest=${digest}`, { headers }),
      ),
    );
    expectLimited(verify, 60);
    const list = await through("RATE_LIMIT_PUBLIC", "/v1/trust-list", { headers });
    expect(list.status).toBe(429);
  });
});

describe("per API key", () => {
  it("limits assessments per key, and another key of the org is not held back", async () => {
    const { org, key } = await orgWithKey();
    const answers: Answer[] = [];
    for (let i = 0; i < OVER; i++) {
      answers.push(
        await through("RATE_LIMIT_ASSESS", "/v1/assess", post(key, { mandate: payment() })),
      );
    }
    expectLimited(answers, 10);
    // A 429 is never a verdict: nothing limited carries `decision`.
    expect(answers.filter((a) => a.status === 429).some((a) => "decision" in a.json)).toBe(false);
    const other = await org.key();
    const fresh = await through(
      "RATE_LIMIT_ASSESS",
      "/v1/assess",
      post(other.key, { mandate: payment() }),
    );
    expect(fresh.status).toBe(200);
  });

  it("limits writes per key", async () => {
    const { key } = await orgWithKey();
    const answers = await Promise.all(
      Array.from({ length: OVER }, (_, i) =>
        through("RATE_LIMIT_WRITE", "/v1/principals", post(key, { name: `p${i}` })),
      ),
    );
    expectLimited(answers, 10);
    expect(answers.filter((a) => a.status !== 429).every((a) => a.status === 201)).toBe(true);
  });
});

describe("per org on expensive reads", () => {
  it("limits audit verification per org, and another org is not held back", async () => {
    const { key } = await orgWithKey();
    const headers = { "x-api-key": key };
    const answers: Answer[] = [];
    for (let i = 0; i < OVER; i++) {
      answers.push(await through("RATE_LIMIT_EXPENSIVE", "/v1/audit/verify", { headers }));
    }
    expectLimited(answers, 60);
    expect(answers.filter((a) => a.status !== 429).every((a) => a.status === 200)).toBe(true);
    const other = await orgWithKey();
    const res = await through("RATE_LIMIT_EXPENSIVE", "/v1/audit/verify", {
      headers: { "x-api-key": other.key },
    });
    expect(res.status).toBe(200);
  });
});
