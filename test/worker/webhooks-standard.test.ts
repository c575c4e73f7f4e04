import { env } from "cloudflare:test";
import { decodeProtectedHeader } from "jose";
import { Webhook, WebhookVerificationError } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { logIdFor } from "#audit/checkpoint";
import { call } from "./support/api";
import { agentOf, assessOk, createPolicy, type Json, orgWithKey, payment } from "./support/assess";
import { ownerSql } from "./support/db";
import { type Arrival, eventually, received, receiver, reconfigure } from "./support/webhooks";

// Issue 17 item 3, docs/webhooks.md "Standard Webhooks": every endpoint has its own whsec_
// secret, shown once; deliveries carry webhook-id, webhook-timestamp and webhook-signature,
// verified here with the `standardwebhooks` package exactly as a receiver would; the service
// JWS names the endpoint and the org's log id; a rotation signs with both secrets during its
// overlap, then with the new one only.

const SECRET = /^whsec_[A-Za-z0-9+/]{43}=$/;

/** An org whose every assessment is denied, with an endpoint listening for denials. */
async function deniedOrg() {
  const { org, key } = await orgWithKey();
  const agent = await agentOf(org);
  await createPolicy(org, { max_amount: 1 });
  const hook = await receiver();
  const res = await call("/v1/webhook-endpoints", {
    method: "POST",
    key,
    body: { url: hook.url, eventTypes: ["assessment.denied"] },
  });
  expect(res.status).toBe(201);
  const endpoint = res.json;
  await reconfigure(hook.name, { secret: endpoint.secret });
  return { org, key, agent, hook, endpoint };
}

async function denyAndReceive(setup: { key: string; agent: Json; hook: { name: string } }) {
  const before = (await received(setup.hook.name)).arrivals.length;
  await assessOk(setup.key, { mandate: payment(), agent_id: setup.agent.id });
  return eventually(async () => {
    const log = await received(setup.hook.name);
    return log.arrivals.length > before ? (log.arrivals[before] as Arrival) : undefined;
  });
}

/** Standard Webhooks verification as a receiver writes it: raw body, the three headers. */
function verifyStandard(secret: string, arrival: Arrival) {
  return new Webhook(secret).verify(rawText(arrival), {
    "webhook-id": arrival.webhook.id ?? "",
    "webhook-timestamp": arrival.webhook.timestamp ?? "",
    "webhook-signature": arrival.webhook.signature ?? "",
  });
}

function rawText(arrival: Arrival) {
  return new TextDecoder().decode(Uint8Array.from(atob(arrival.raw), (c) => c.charCodeAt(0)));
}

function rotate(key: string, id: string, body?: unknown) {
  return call(`/v1/webhook-endpoints/${id}/rotate-secret`, {
    method: "POST",
    key,
    raw: true,
    body,
  });
}

describe("the endpoint's secret", () => {
  it("is a whsec_ secret shown once at creation, never listed, and stored sealed", async () => {
    const { key, endpoint } = await deniedOrg();
    expect(endpoint.secret).toMatch(SECRET);
    expect(endpoint.previous_secret_expires_at).toBeNull();
    const list = await call("/v1/webhook-endpoints", { key });
    const listed = list.json.data.find((e: Json) => e.id === endpoint.id);
    expect(listed).not.toHaveProperty("secret");
    expect(JSON.stringify(list.json)).not.toContain(endpoint.secret.slice(6));
    const [row] = await ownerSql`select secret, previous_secret from webhook_endpoints
      where id = ${endpoint.id}`;
    expect(row?.secret).toMatch(/^v1\.[\w-]+\.[\w-]+\.[\w-]+$/);
    expect(row?.secret).not.toContain(endpoint.secret.slice(6));
    expect(row?.previous_secret).toBeNull();
  });
});

describe("a delivery", () => {
  it("verifies with standardwebhooks under its endpoint's secret; the JWS names the endpoint and the org", async () => {
    const setup = await deniedOrg();
    const arrival = await denyAndReceive(setup);
    expect(arrival.answered).toBe(200);
    expect(arrival.standard_verified).toBe(true);
    const body = verifyStandard(setup.endpoint.secret, arrival) as Json;
    expect(body.id).toBe(arrival.webhook.id);
    expect(body.type).toBe("assessment.denied");
    expect(arrival.webhook.signature?.split(" ")).toHaveLength(1);
    const header = decodeProtectedHeader(
      (arrival.signature ?? "").replace("..", `.${btoa("{}")}.`),
    );
    expect(header).toMatchObject({
      alg: "EdDSA",
      typ: "webhook+jws",
      endpoint_id: setup.endpoint.id,
      log_id: logIdFor(setup.org.id),
      iat: Number(arrival.webhook.timestamp),
    });
    expect(JSON.stringify(header)).not.toContain(setup.org.id);
  });

  it("replayed to another tenant's endpoint fails its receiver's verification", async () => {
    const a = await deniedOrg();
    const b = await deniedOrg();
    const captured = await denyAndReceive(a);
    expect(() => verifyStandard(b.endpoint.secret, captured)).toThrow(WebhookVerificationError);
    // Replayed byte for byte, headers and all, to B's receiver: refused, nothing processed.
    const replay = await fetch(`${env.TEST_FIXTURE_URL}/hooks/${b.hook.name}`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "webhook-id": captured.webhook.id ?? "",
        "webhook-timestamp": captured.webhook.timestamp ?? "",
        "webhook-signature": captured.webhook.signature ?? "",
        "x-service-signature": captured.signature ?? "",
        "x-service-key-id": captured.key_id ?? "",
      },
      body: Uint8Array.from(atob(captured.raw), (c) => c.charCodeAt(0)),
    });
    expect(replay.status).toBe(400);
    const log = await received(b.hook.name);
    expect(log.arrivals.map((x) => x.standard_verified)).toEqual([false]);
    expect(log.processed).toEqual([]);
  });
});

describe("POST /v1/webhook-endpoints/{id}/rotate-secret", () => {
  it("during the overlap both secrets verify; after it only the new one", async () => {
    const setup = await deniedOrg();
    const old = setup.endpoint.secret as string;
    const res = await rotate(setup.key, setup.endpoint.id, { expires_in: 3600 });
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ object: "webhook_endpoint", id: setup.endpoint.id });
    const fresh = res.json.secret as string;
    expect(fresh).toMatch(SECRET);
    expect(fresh).not.toBe(old);
    const expiresAt = Date.parse(res.json.previous_secret_expires_at!);
    expect(Math.abs(expiresAt - (Date.now() + 3600_000))).toBeLessThan(10_000);

    await reconfigure(setup.hook.name, { secret: fresh });
    const during = await denyAndReceive(setup);
    expect(during.webhook.signature?.split(" ")).toHaveLength(2);
    expect(during.webhook.signature?.split(" ").every((s) => s.startsWith("v1,"))).toBe(true);
    expect(verifyStandard(fresh, during)).toMatchObject({ type: "assessment.denied" });
    expect(verifyStandard(old, during)).toMatchObject({ type: "assessment.denied" });
    expect(during.standard_verified).toBe(true);

    // The overlap ends (its time moved into the past rather than waited for).
    await ownerSql`update webhook_endpoints
      set previous_secret_expires_at = now() - interval '1 second' where id = ${setup.endpoint.id}`;
    const after = await denyAndReceive(setup);
    expect(after.webhook.signature?.split(" ")).toHaveLength(1);
    expect(verifyStandard(fresh, after)).toMatchObject({ type: "assessment.denied" });
    expect(() => verifyStandard(old, after)).toThrow(WebhookVerificationError);
    const list = await call("/v1/webhook-endpoints", { key: setup.key });
    expect(list.json.data.find((e: Json) => e.id === setup.endpoint.id)).toMatchObject({
      previous_secret_expires_at: null,
    });
    const audit = await call("/v1/audit?type=webhook_endpoint.secret_rotated", {
      token: setup.org.token,
    });
    expect(audit.status).toBe(200);
    expect(audit.json.data).toHaveLength(1);
    expect(JSON.stringify(audit.json)).not.toContain(fresh.slice(6));
  });

  it("a previous secret that no longer opens loses its overlap; the delivery is still signed and sent", async () => {
    const setup = await deniedOrg();
    const rotated = await rotate(setup.key, setup.endpoint.id, { expires_in: 3600 });
    await reconfigure(setup.hook.name, { secret: rotated.json.secret });
    await ownerSql`update webhook_endpoints set previous_secret = 'v1.gone.AAAA.AAAA'
      where id = ${setup.endpoint.id}`;
    const arrival = await denyAndReceive(setup);
    expect(arrival.answered).toBe(200);
    expect(arrival.webhook.signature?.split(" ")).toHaveLength(1);
    expect(verifyStandard(rotated.json.secret, arrival)).toMatchObject({ id: arrival.webhook.id });
  });

  it("with no body overlaps a day; expires_in 0 retires the old secret at once", async () => {
    const setup = await deniedOrg();
    const first = await rotate(setup.key, setup.endpoint.id);
    expect(first.status).toBe(200);
    const overlap = Date.parse(first.json.previous_secret_expires_at!) - Date.now();
    expect(Math.abs(overlap - 86_400_000)).toBeLessThan(10_000);
    const second = await rotate(setup.key, setup.endpoint.id, { expires_in: 0 });
    expect(second.status).toBe(200);
    expect(second.json.previous_secret_expires_at).toBeNull();
    await reconfigure(setup.hook.name, { secret: second.json.secret });
    const arrival = await denyAndReceive(setup);
    expect(arrival.webhook.signature?.split(" ")).toHaveLength(1);
    expect(verifyStandard(second.json.secret, arrival)).toMatchObject({ id: arrival.webhook.id });
    expect(() => verifyStandard(first.json.secret, arrival)).toThrow(WebhookVerificationError);
    expect(() => verifyStandard(setup.endpoint.secret, arrival)).toThrow(WebhookVerificationError);
  });

  it("refuses a bad expires_in or an unknown field with 400, changing nothing", async () => {
    const { key, endpoint } = await deniedOrg();
    for (const body of [
      { expires_in: -1 },
      { expires_in: 604_801 },
      { expires_in: 1.5 },
      { expires_in: "3600" },
      { expires_in: 60, secret: "whsec_mine" },
      [],
      "null",
    ]) {
      const res = await rotate(key, endpoint.id, body);
      expect(res.status).toBe(400);
      expect(res.error).toMatchObject({ error: "invalid_request" });
      expect(res.error.details).toEqual(expect.any(Array));
    }
    const notJson = await rotate(key, endpoint.id, "not json");
    expect(notJson.status).toBe(400);
    expect(notJson.error).toMatchObject({ error: "invalid_json" });
    const [row] = await ownerSql`select previous_secret from webhook_endpoints
      where id = ${endpoint.id}`;
    expect(row?.previous_secret).toBeNull();
  });

  it("another mode's or a deleted endpoint is 404", async () => {
    const { org, key, endpoint } = await deniedOrg();
    const { key: testKey } = await org.key(["webhooks:write"], "test");
    expect((await rotate(testKey, endpoint.id, {})).status).toBe(404);
    await call(`/v1/webhook-endpoints/${endpoint.id}`, { method: "DELETE", key });
    const gone = await rotate(key, endpoint.id, {});
    expect(gone.status).toBe(404);
    expect(gone.error).toMatchObject({ error: "not_found" });
  });
});
