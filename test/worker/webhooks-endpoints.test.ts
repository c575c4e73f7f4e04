import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { call, newOrg } from "./support/api";
import { fetchWith, type Json, orgWithKey } from "./support/assess";
import { ownerSql } from "./support/db";
import { createEndpoint, deliveries, outboxAlert } from "./support/webhooks";

// Spec: POST /v1/webhook-endpoints (url, eventTypes; an empty list subscribes to every event;
// the prose spells it event_types), GET list, DELETE 200/404, GET …/deliveries 200/404,
// POST /v1/webhooks/dispatch. docs/webhooks.md: the record, the token, modes, the SSRF guard.

const HOOK = () => `${env.TEST_FIXTURE_URL}/hooks/endpoints-test`;

async function post(key: string, body: unknown) {
  return call("/v1/webhook-endpoints", { method: "POST", key, raw: true, body });
}

describe("POST /v1/webhook-endpoints", () => {
  it("creates an endpoint: 201 with the whole record", async () => {
    const { key } = await orgWithKey();
    const res = await post(key, {
      url: HOOK(),
      eventTypes: ["assessment.denied", "agent.revoked"],
      description: "Fraud desk",
    });
    expect(res.status).toBe(201);
    expect(res.json).toEqual({
      object: "webhook_endpoint",
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      url: HOOK(),
      event_types: ["assessment.denied", "agent.revoked"],
      description: "Fraud desk",
      token_set: false,
      livemode: true,
      status: "enabled",
      disabled_reason: null,
      created: expect.any(String),
      disabled_at: null,
      previous_secret_expires_at: null,
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/),
    });
    expect(Date.parse(res.json.created)).toBeLessThanOrEqual(Date.now());
  });

  it("accepts event_types as the prose spells it, and both spellings when they agree", async () => {
    const { key } = await orgWithKey();
    const a = await post(key, { url: HOOK(), event_types: ["assessment.flagged"] });
    expect(a.status).toBe(201);
    expect(a.json.event_types).toEqual(["assessment.flagged"]);
    const b = await post(key, {
      url: HOOK(),
      eventTypes: ["agent.revoked", "agent.suspended"],
      event_types: ["agent.suspended", "agent.revoked"],
    });
    expect(b.status).toBe(201);
    expect(b.json.event_types).toEqual(["agent.revoked", "agent.suspended"]);
  });

  it("an empty or absent list subscribes to every event", async () => {
    const { key } = await orgWithKey();
    expect((await post(key, { url: HOOK(), eventTypes: [] })).json.event_types).toEqual([]);
    expect((await post(key, { url: HOOK() })).json.event_types).toEqual([]);
  });

  it("the token is never returned, only that one is set", async () => {
    const { key } = await orgWithKey();
    const token = `secret-${crypto.randomUUID()}`;
    const res = await post(key, { url: HOOK(), token });
    expect(res.status).toBe(201);
    expect(res.json.token_set).toBe(true);
    expect(res.text).not.toContain(token);
    const list = await call("/v1/webhook-endpoints", { key });
    expect(list.text).not.toContain(token);
    expect(list.json.data[0]!.token_set).toBe(true);
  });

  it.each([
    [{ url: HOOK(), eventTypes: ["assessment.nope"] }, "eventTypes.0"],
    [{ url: HOOK(), event_types: ["payment.succeeded"] }, "event_types.0"],
    [{ url: HOOK(), eventTypes: ["agent.revoked", "agent.revoked"] }, "eventTypes.1"],
    [
      { url: HOOK(), eventTypes: ["agent.revoked"], event_types: ["agent.suspended"] },
      "event_types",
    ],
    [{ url: HOOK(), eventTypes: "assessment.denied" }, "eventTypes"],
    [{ url: HOOK(), token: "short" }, "token"],
    [{ url: HOOK(), token: `has space ${"x".repeat(20)}` }, "token"],
    [{ url: HOOK(), token: `tab\t${"x".repeat(20)}` }, "token"],
    [{ url: HOOK(), description: "" }, "description"],
    [{ url: HOOK(), description: "a\u0000b" }, "description"],
    [{ url: HOOK(), secret: "x" }, ""],
    [{ eventTypes: [] }, "url"],
    [{ url: 42 }, "url"],
    [{ url: `https://example.com/${"a".repeat(2048)}` }, "url"],
  ])("refuses %j: 400 naming %s", async (body, path) => {
    const { key } = await orgWithKey();
    const res = await post(key, body);
    expect(res.status).toBe(400);
    expect(res.error.error).toBe("invalid_request");
    expect(res.error.details.map((d: Json) => d.path)).toContain(path);
    expect((await call("/v1/webhook-endpoints", { key })).json.data).toEqual([]);
  });

  it("refuses a body that is not JSON: 400", async () => {
    const { key } = await orgWithKey();
    const res = await call("/v1/webhook-endpoints", {
      method: "POST",
      key,
      raw: true,
      body: "{nope",
    });
    expect(res.status).toBe(400);
  });

  it("is recorded in the audit ledger, and so is a deletion", async () => {
    const { org, key } = await orgWithKey();
    const endpoint = await createEndpoint(key, { url: HOOK() });
    await call(`/v1/webhook-endpoints/${endpoint.id}`, { method: "DELETE", key });
    const created = await call("/v1/audit?type=webhook_endpoint.created", { token: org.token });
    const deleted = await call("/v1/audit?type=webhook_endpoint.deleted", { token: org.token });
    expect(created.json.data.map((e: Json) => e.subject)).toEqual([
      { type: "webhook_endpoint", id: endpoint.id },
    ]);
    expect(deleted.json.data.map((e: Json) => e.subject)).toEqual([
      { type: "webhook_endpoint", id: endpoint.id },
    ]);
  });

  it("allows 16 endpoints per mode; the 17th is 400 endpoint_limit_reached until one is deleted", async () => {
    const { org, key } = await orgWithKey();
    const ids: string[] = [];
    for (let i = 0; i < 16; i++)
      ids.push((await createEndpoint(key, { url: `${HOOK()}-${i}` })).id);
    const refused = await post(key, { url: HOOK() });
    expect(refused.status).toBe(400);
    expect(refused.error.error).toBe("endpoint_limit_reached");
    // The other mode has its own allowance.
    const { key: testKey } = await org.key(undefined, "test");
    expect((await post(testKey, { url: HOOK() })).status).toBe(201);
    await call(`/v1/webhook-endpoints/${ids[0]}`, { method: "DELETE", key });
    expect((await post(key, { url: HOOK() })).status).toBe(201);
  });
});

describe("the SSRF guard", () => {
  // Production's policy: https to public hosts only.
  const hostile = [
    "http://example.com/hook",
    "https://127.0.0.1/hook",
    "https://localhost/hook",
    "https://api.localhost/hook",
    "https://10.0.0.8/hook",
    "https://172.16.3.4/hook",
    "https://192.168.1.10/hook",
    "https://100.64.0.1/hook",
    "https://169.254.169.254/latest/meta-data/",
    "https://metadata.google.internal/computeMetadata/v1/",
    "https://224.0.0.1/hook",
    "https://0.0.0.0/hook",
    "https://2130706433/hook",
    "https://0x7f.1/hook",
    "https://[::1]/hook",
    "https://[::]/hook",
    "https://[fd00::1]/hook",
    "https://[fe80::1]/hook",
    "https://[ff02::1]/hook",
    "https://[::ffff:127.0.0.1]/hook",
    "https://[::ffff:169.254.169.254]/hook",
    "https://service.internal/hook",
    "https://printer.local/hook",
    "https://user:pass@example.com/hook",
    "ftp://example.com/hook",
    "file:///etc/passwd",
    "javascript:alert(1)",
    "not a url",
  ];

  it.each(hostile)("production refuses %s: 400 url_not_allowed, nothing stored", async (url) => {
    const { key } = await orgWithKey();
    const res = await fetchWith({ ENVIRONMENT: "production" }, "/v1/webhook-endpoints", {
      method: "POST",
      headers: { "x-api-key": key, "content-type": "application/json" },
      body: JSON.stringify({ url }),
    });
    expect(res.status).toBe(400);
    expect(res.json.error).toBe("url_not_allowed");
    expect(res.json.details[0].path).toBe("url");
    expect((await call("/v1/webhook-endpoints", { key })).json.data).toEqual([]);
  });

  it("local development allows plain http on loopback, and still nothing private or internal", async () => {
    const { key } = await orgWithKey();
    expect((await post(key, { url: "http://127.0.0.1:8080/hook" })).status).toBe(201);
    for (const url of [
      "http://10.0.0.8/hook",
      "https://169.254.169.254/latest/meta-data/",
      "http://example.com/hook",
      "https://service.internal/hook",
    ]) {
      const res = await post(key, { url });
      expect(res.status, url).toBe(400);
      expect(res.error.error).toBe("url_not_allowed");
    }
  });

  it("stores the URL as the WHATWG parser normalises it", async () => {
    const { key } = await orgWithKey();
    const res = await post(key, { url: "HTTP://127.0.0.1:80/Hook/../hook?x=1" });
    expect(res.status).toBe(201);
    expect(res.json.url).toBe("http://127.0.0.1/hook?x=1");
  });
});

describe("GET /v1/webhook-endpoints", () => {
  it("lists the caller's mode only, newest first, in keyset pages", async () => {
    const { org, key } = await orgWithKey();
    const { key: testKey } = await org.key(undefined, "test");
    const a = await createEndpoint(key, { url: `${HOOK()}-a` });
    const b = await createEndpoint(key, { url: `${HOOK()}-b` });
    const c = await createEndpoint(key, { url: `${HOOK()}-c` });
    const t = await createEndpoint(testKey, { url: `${HOOK()}-t` });
    expect(t.livemode).toBe(false);
    const first = await call("/v1/webhook-endpoints?limit=2", { key });
    expect(first.status).toBe(200);
    expect(first.json.object).toBe("list");
    expect(first.json.data.map((e: Json) => e.id)).toEqual([c.id, b.id]);
    expect(first.json.has_more).toBe(true);
    const second = await call(`/v1/webhook-endpoints?limit=2&cursor=${first.json.next_cursor}`, {
      key,
    });
    expect(second.json.data.map((e: Json) => e.id)).toEqual([a.id]);
    expect(second.json.has_more).toBe(false);
    const tests = await call("/v1/webhook-endpoints", { key: testKey });
    expect(tests.json.data.map((e: Json) => e.id)).toEqual([t.id]);
    // A session is live.
    const session = await call("/v1/webhook-endpoints", { token: org.token });
    expect(session.json.data.map((e: Json) => e.id)).toEqual([c.id, b.id, a.id]);
  });

  it("never shows another org's endpoints", async () => {
    const { key } = await orgWithKey();
    await createEndpoint(key, { url: HOOK() });
    const { key: other } = await orgWithKey();
    expect((await call("/v1/webhook-endpoints", { key: other })).json.data).toEqual([]);
  });

  it("refuses a malformed cursor or limit: 400", async () => {
    const { key } = await orgWithKey();
    expect((await call("/v1/webhook-endpoints?cursor=%%%", { key })).status).toBe(400);
    expect((await call("/v1/webhook-endpoints?limit=0", { key })).status).toBe(400);
    expect((await call("/v1/webhook-endpoints?limit=101", { key })).status).toBe(400);
  });
});

describe("DELETE /v1/webhook-endpoints/{id}", () => {
  it("answers 200 {object, id, deleted}, then 404; the endpoint leaves the list", async () => {
    const { key } = await orgWithKey();
    const endpoint = await createEndpoint(key, { url: HOOK() });
    const res = await call(`/v1/webhook-endpoints/${endpoint.id}`, { method: "DELETE", key });
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ object: "webhook_endpoint", id: endpoint.id, deleted: true });
    const again = await call(`/v1/webhook-endpoints/${endpoint.id}`, { method: "DELETE", key });
    expect(again.status).toBe(404);
    expect(again.error.error).toBe("not_found");
    expect((await call("/v1/webhook-endpoints", { key })).json.data).toEqual([]);
    const history = await call(`/v1/webhook-endpoints/${endpoint.id}/deliveries`, { key });
    expect(history.status).toBe(404);
  });

  it("cancels the endpoint's pending deliveries and keeps them on record", async () => {
    const { org, key } = await orgWithKey();
    const endpoint = await createEndpoint(key, {
      url: HOOK(),
      eventTypes: ["audit.integrity_alert"],
    });
    await outboxAlert(org.id);
    // Leased, so no sweep delivers it first.
    await ownerSql`update webhook_deliveries set lease_until = now() + interval '1 hour',
      next_attempt_at = now() + interval '1 hour' where endpoint_id = ${endpoint.id}`;
    expect((await deliveries(key, endpoint.id))[0]?.status).toBe("pending");
    await call(`/v1/webhook-endpoints/${endpoint.id}`, { method: "DELETE", key });
    const rows = await ownerSql`select status, next_attempt_at, completed_at
      from webhook_deliveries where endpoint_id = ${endpoint.id}`;
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ status: "cancelled", next_attempt_at: null });
    expect(rows[0]?.completed_at).not.toBeNull();
    // New events no longer fan out to it.
    await outboxAlert(org.id);
    const after = await ownerSql`select count(*)::int as n from webhook_deliveries
      where endpoint_id = ${endpoint.id}`;
    expect(after[0]?.n).toBe(1);
  });

  it("a test key cannot delete a live endpoint: 404", async () => {
    const { org, key } = await orgWithKey();
    const { key: testKey } = await org.key(undefined, "test");
    const endpoint = await createEndpoint(key, { url: HOOK() });
    const res = await call(`/v1/webhook-endpoints/${endpoint.id}`, {
      method: "DELETE",
      key: testKey,
    });
    expect(res.status).toBe(404);
    expect((await call("/v1/webhook-endpoints", { key })).json.data).toHaveLength(1);
  });
});

describe("GET /v1/webhook-endpoints/{id}/deliveries", () => {
  it("pages newest first and filters by status", async () => {
    const { org, key } = await orgWithKey();
    const endpoint = await createEndpoint(key, {
      url: HOOK(),
      eventTypes: ["audit.integrity_alert"],
    });
    for (let i = 0; i < 3; i++) {
      await ownerSql`insert into events (id, org_id, type, data)
        values (${crypto.randomUUID()}, ${org.id}, 'audit.integrity_alert', ${JSON.stringify({ i })})`;
    }
    await ownerSql`update webhook_deliveries set lease_until = now() + interval '1 hour',
      next_attempt_at = now() + interval '1 hour' where endpoint_id = ${endpoint.id}`;
    const [newest] = await ownerSql`select id from webhook_deliveries
      where endpoint_id = ${endpoint.id} order by id desc limit 1`;
    await ownerSql`update webhook_deliveries set status = 'cancelled', next_attempt_at = null,
      completed_at = now() where id = ${newest?.id}`;
    const first = await call(`/v1/webhook-endpoints/${endpoint.id}/deliveries?limit=2`, { key });
    expect(first.status).toBe(200);
    expect(first.json.data).toHaveLength(2);
    expect(first.json.data[0]!.id).toBe(newest?.id);
    expect(first.json.has_more).toBe(true);
    const second = await call(
      `/v1/webhook-endpoints/${endpoint.id}/deliveries?limit=2&cursor=${first.json.next_cursor}`,
      { key },
    );
    expect(second.json.data).toHaveLength(1);
    const ids = [...first.json.data, ...second.json.data].map((d: Json) => d.id);
    expect(ids).toEqual([...ids].sort().reverse());
    const pending = await deliveries(key, endpoint.id, "status=pending");
    expect(pending.map((d) => d.status)).toEqual(["pending", "pending"]);
    expect(pending[0]).toMatchObject({
      object: "webhook_delivery",
      endpoint_id: endpoint.id,
      event: { type: "audit.integrity_alert", created: expect.any(Number) },
      attempt_count: 0,
      attempts: [],
      next_attempt_at: expect.any(String),
      completed_at: null,
    });
    const cancelled = await deliveries(key, endpoint.id, "status=cancelled");
    expect(cancelled.map((d) => d.id)).toEqual([newest?.id]);
    expect(
      (await call(`/v1/webhook-endpoints/${endpoint.id}/deliveries?status=lost`, { key })).status,
    ).toBe(400);
  });

  it("answers 404 for an unknown id and for another org's endpoint", async () => {
    const { key } = await orgWithKey();
    const endpoint = await createEndpoint(key, { url: HOOK() });
    const { key: other } = await orgWithKey();
    const res = await call(`/v1/webhook-endpoints/${endpoint.id}/deliveries`, { key: other });
    expect(res.status).toBe(404);
    const unknown = await call(`/v1/webhook-endpoints/${crypto.randomUUID()}/deliveries`, { key });
    expect(unknown.status).toBe(404);
  });
});

describe("POST /v1/webhooks/dispatch", () => {
  it("answers 503 webhook_queue_unavailable when no queue is bound, and changes nothing", async () => {
    const { key } = await orgWithKey();
    const res = await fetchWith({ WEBHOOK_QUEUE: undefined }, "/v1/webhooks/dispatch", {
      method: "POST",
      headers: { "x-api-key": key },
    });
    expect(res.status).toBe(503);
    expect(res.json.error).toBe("webhook_queue_unavailable");
  });

  it("with nothing pending enqueues nothing", async () => {
    const org = await newOrg();
    const res = await call("/v1/webhooks/dispatch", { method: "POST", token: org.token });
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ object: "webhook_dispatch", enqueued: 0, has_more: false });
  });
});
