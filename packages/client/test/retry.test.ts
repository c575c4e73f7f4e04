import { describe, expect, it } from "vitest";
import { ApiError, createClient } from "../src/index.js";

// The retry rules, proven with a fake fetch and a fake clock: which requests are repeated,
// on which answers, after how long, and what the caller sees when the retries run out.

interface Sent {
  method: string;
  path: string;
  body: string;
  headers: Headers;
}

function fakeService(answers: Array<() => Response>) {
  const sent: Sent[] = [];
  const waits: number[] = [];
  const client = createClient({
    baseUrl: "https://risk.example/",
    apiKey: "sk_test_x",
    fetch: async (request) => {
      const url = new URL(request.url);
      sent.push({
        method: request.method,
        path: url.pathname,
        body: await request.text(),
        headers: request.headers,
      });
      const next = answers[Math.min(sent.length - 1, answers.length - 1)];
      if (!next) throw new Error("no answer scripted");
      return next();
    },
    retry: {
      sleep: async (ms) => {
        waits.push(ms);
      },
      random: () => 0.5,
    },
  });
  return { client, sent, waits };
}

const json =
  (status: number, body: unknown, headers: Record<string, string> = {}) =>
  () =>
    new Response(JSON.stringify(body), {
      status,
      headers: { "content-type": "application/json", ...headers },
    });

const limited = json(429, { error: "rate_limited" }, { "retry-after": "3" });
const unavailable = json(503, { error: "database_unavailable" });
const me = json(200, { orgId: "o", actor: { type: "api_key", id: "k" }, scopes: [] });

describe("createClient", () => {
  it("sends the API key and answers the typed body", async () => {
    const { client, sent } = fakeService([me]);
    const { data, response } = await client.GET("/v1/me");
    expect(response.status).toBe(200);
    expect(data.orgId).toBe("o");
    expect(sent).toHaveLength(1);
    expect(sent[0]?.path).toBe("/v1/me");
    expect(sent[0]?.headers.get("x-api-key")).toBe("sk_test_x");
  });

  it("throws ApiError with the status, code and details of the envelope", async () => {
    const details = [{ path: "mandate", message: "Required", code: "invalid_type" }];
    const { client, sent } = fakeService([json(400, { error: "invalid_request", details })]);
    const failure = await client.POST("/v1/assess", { body: {} as never }).catch((e) => e);
    expect(failure).toBeInstanceOf(ApiError);
    expect(failure).toMatchObject({ status: 400, error: "invalid_request", details });
    expect(sent).toHaveLength(1);
  });

  it("exposes the envelope's message and doc_url", async () => {
    const message = "The API key is not valid: it may have been revoked or mistyped.";
    const doc_url = "https://risk.example.com/docs#description/unauthenticated";
    const details = { reason: "unknown" };
    const { client } = fakeService([
      json(401, { error: "unauthenticated", message, details, doc_url }),
    ]);
    const failure = await client.GET("/v1/me").catch((e) => e);
    expect(failure).toBeInstanceOf(ApiError);
    expect(failure).toMatchObject({ status: 401, error: "unauthenticated", details, doc_url });
    expect(failure.message).toBe(message);
  });

  it("keeps the status of an answer that is not the service's envelope", async () => {
    const { client } = fakeService([
      () => new Response("<html>bad gateway</html>", { status: 502 }),
    ]);
    const failure = await client.GET("/v1/me").catch((e) => e);
    expect(failure).toMatchObject({ status: 502, error: "unexpected_response" });
    expect(failure.message).toBe("502 unexpected_response");
    expect(failure.doc_url).toBeUndefined();
  });
});

describe("retries", () => {
  it("repeats a read after a 429, waiting what Retry-After asks", async () => {
    const { client, sent, waits } = fakeService([limited, me]);
    const { data } = await client.GET("/v1/me");
    expect(data.orgId).toBe("o");
    expect(sent.map((s) => s.method)).toEqual(["GET", "GET"]);
    expect(waits).toEqual([3000]);
  });

  it("honours a Retry-After given as an HTTP date", async () => {
    const at = new Date(Date.now() + 10_000).toUTCString();
    const { client, waits } = fakeService([json(503, { error: "x" }, { "retry-after": at }), me]);
    await client.GET("/v1/me");
    expect(waits).toHaveLength(1);
    expect(waits[0]).toBeGreaterThanOrEqual(9000);
    expect(waits[0]).toBeLessThanOrEqual(11_000);
  });

  it("backs off exponentially with jitter when no Retry-After is given", async () => {
    const { client, waits } = fakeService([unavailable, unavailable, me]);
    await client.GET("/v1/me");
    // random() = 0.5: half of 500 ms, then half of 1000 ms.
    expect(waits).toEqual([250, 500]);
  });

  it("repeats POST /v1/assess, idempotent by its mandate, with the same body", async () => {
    const body = { mandate: { vct: "mandate.payment.1" } } as never;
    const { client, sent } = fakeService([unavailable, json(200, { decision: "review" })]);
    await client.POST("/v1/assess", { body });
    expect(sent.map((s) => `${s.method} ${s.path}`)).toEqual([
      "POST /v1/assess",
      "POST /v1/assess",
    ]);
    expect(sent[1]?.body).toBe(sent[0]?.body);
    expect(JSON.parse(sent[1]?.body ?? "")).toEqual(body);
  });

  it("repeats a history import, idempotent by its records' ids, after a 429", async () => {
    const body = { records: [{ id: "txn_1" }] } as never;
    const { client, sent, waits } = fakeService([limited, json(201, { inserted: 1 })]);
    await client.POST("/v1/history/transactions", { body });
    expect(sent.map((s) => `${s.method} ${s.path}`)).toEqual([
      "POST /v1/history/transactions",
      "POST /v1/history/transactions",
    ]);
    expect(sent[1]?.body).toBe(sent[0]?.body);
    expect(waits).toEqual([3000]);
  });

  it("repeats a write sent with an Idempotency-Key", async () => {
    const { client, sent } = fakeService([limited, json(201, { url: "https://pay" })]);
    await client.POST("/v1/billing/checkout", {
      body: { plan: "growth" } as never,
      headers: { "idempotency-key": "k-1" },
    });
    expect(sent).toHaveLength(2);
    expect(sent[1]?.headers.get("idempotency-key")).toBe("k-1");
  });

  it("never repeats another write: the 503 is the caller's to handle", async () => {
    const { client, sent, waits } = fakeService([unavailable, json(201, {})]);
    const failure = await client
      .POST("/v1/webhook-endpoints", { body: { url: "https://h.example" } as never })
      .catch((e) => e);
    expect(failure).toMatchObject({ status: 503, error: "database_unavailable" });
    expect(sent).toHaveLength(1);
    expect(waits).toEqual([]);
  });

  it.each([400, 401, 403, 404, 409, 422])("never repeats a %i, even for a read", async (status) => {
    const { client, sent } = fakeService([json(status, { error: "not_found" }), me]);
    const failure = await client.GET("/v1/me").catch((e) => e);
    expect(failure).toMatchObject({ status, error: "not_found" });
    expect(sent).toHaveLength(1);
  });

  it("gives up after maxRetries and surfaces the last answer with its Retry-After", async () => {
    const { client, sent, waits } = fakeService([limited]);
    const failure = await client.GET("/v1/me").catch((e) => e);
    expect(failure).toMatchObject({ status: 429, error: "rate_limited", retryAfter: 3 });
    expect(sent).toHaveLength(3);
    expect(waits).toEqual([3000, 3000]);
  });

  it("caps a long Retry-After at maxDelayMs", async () => {
    const { client, waits } = fakeService([
      json(429, { error: "rate_limited" }, { "retry-after": "3600" }),
      me,
    ]);
    await client.GET("/v1/me");
    expect(waits).toEqual([20_000]);
  });
});
