import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { Env } from "../../src/env";
import worker from "../../workers/main";
import { newOrg } from "./support/api";
import { errorBody } from "./support/errors";

// Fault injection: the same Worker with a broken environment, called as the runtime calls it.
async function fetchWith(override: Partial<Env>, url: string, init: RequestInit = {}) {
  const ctx = createExecutionContext();
  const response = await worker.fetch(new Request(url, init), { ...env, ...override }, ctx);
  await waitOnExecutionContext(ctx);
  return {
    status: response.status,
    json: (await response.json()) as any,
    headers: response.headers,
  };
}

describe("when the database cannot be reached", () => {
  it("answers 503 database_unavailable, never 500", async () => {
    const org = await newOrg();
    const { key } = await org.key(["assess:read"]);
    const unreachable = (env.DATABASE_URL as string).replace(/@[^/]+\//, "@127.0.0.1:9/");
    const res = await fetchWith({ DATABASE_URL: unreachable }, "https://risk.test/v1/me", {
      headers: { "x-api-key": key },
    });
    expect(res.status).toBe(503);
    expect(res.json).toEqual(errorBody("database_unavailable"));
    expect(res.headers.get("x-request-id")).toMatch(/^req_/);
  });

  it("answers 503 when no database is configured", async () => {
    const org = await newOrg();
    const { key } = await org.key(["assess:read"]);
    const res = await fetchWith({ DATABASE_URL: undefined }, "https://risk.test/v1/me", {
      headers: { "x-api-key": key },
    });
    expect(res.status).toBe(503);
    expect(res.json).toEqual(errorBody("database_unavailable"));
  });

  it("still answers the liveness probe", async () => {
    const res = await fetchWith({ DATABASE_URL: undefined }, "https://risk.test/health");
    expect(res.status).toBe(200);
  });
});

describe("when the signing key is unavailable", () => {
  // Another host, so the edge cache holds no earlier copy of the key set.
  it("answers the key set with 503 and caches nothing", async () => {
    const url = `https://no-key-${crypto.randomUUID()}.test/.well-known/jwks.json`;
    const res = await fetchWith({ SIGNING_KEY: undefined }, url);
    expect(res.status).toBe(503);
    expect(res.json).toEqual(errorBody("signing_key_unavailable"));
    const retry = await fetchWith({}, url);
    expect(retry.status).toBe(200);
  });

  it("answers 503 for a key that cannot be used", async () => {
    const url = `https://bad-key-${crypto.randomUUID()}.test/.well-known/jwks.json`;
    const res = await fetchWith({ SIGNING_KEY: '{"kty":"OKP"}' }, url);
    expect(res.status).toBe(503);
  });
});

describe("when the identity provider is not configured", () => {
  it("answers a session with 503, and API keys keep working", async () => {
    const org = await newOrg();
    const { key } = await org.key(["assess:read"]);
    const session = await fetchWith({ IDP_JWKS: undefined }, "https://risk.test/v1/me", {
      headers: { authorization: `Bearer ${org.token}` },
    });
    expect(session.status).toBe(503);
    expect(session.json).toEqual(errorBody("identity_provider_unavailable"));
    const apiKey = await fetchWith({ IDP_JWKS: undefined }, "https://risk.test/v1/me", {
      headers: { "x-api-key": key },
    });
    expect(apiKey.status).toBe(200);
  });
});

describe("request limits", () => {
  it("refuses a body over 256 KiB with 413 request_too_large", async () => {
    const org = await newOrg();
    const res = await fetchWith({}, "https://risk.test/v1/api-keys", {
      method: "POST",
      headers: { authorization: `Bearer ${org.token}`, "content-type": "application/json" },
      body: JSON.stringify({ name: "x".repeat(300 * 1024), scopes: ["assess:read"] }),
    });
    expect(res.status).toBe(413);
    expect(res.json).toEqual(errorBody("request_too_large", { max_bytes: 262144 }));
  });
});
