import { SELF } from "cloudflare:test";
import { createClient, type WebhookEvent } from "@agent-risk/client";
import { describe, expect, it } from "vitest";
import { checkMandate } from "../../examples/merchant-check/src/check";
import { memorySeenDeliveries, webhookReceiver } from "../../examples/webhook-receiver/src/app";
import { BASE, call } from "./support/api";
import { agentOf, createPolicy, orgWithKey, payment } from "./support/assess";
import { provenAgentOrg } from "./support/credentials";
import { type Arrival, eventually, received, receiver } from "./support/webhooks";

// Issue 18 part 3: the examples, run against the real Worker and its real deliveries.

async function keySet() {
  return (await (await SELF.fetch(`${BASE}/.well-known/jwks.json`)).json()) as {
    keys: { kid: string; x: string; kty: string; crv: string }[];
  };
}

/** Replays a delivery captured at the fixture server to the example receiver, byte for byte. */
function replay(app: ReturnType<typeof webhookReceiver>, arrival: Arrival, raw?: Uint8Array) {
  return app.request("/webhooks", {
    method: "POST",
    body: raw ?? Uint8Array.from(atob(arrival.raw), (c) => c.charCodeAt(0)),
    headers: {
      "content-type": "application/json",
      "webhook-id": arrival.webhook.id ?? "",
      "webhook-timestamp": arrival.webhook.timestamp ?? "",
      "webhook-signature": arrival.webhook.signature ?? "",
      "x-service-signature": arrival.signature ?? "",
      "x-service-key-id": arrival.key_id ?? "",
    },
  });
}

describe("examples/webhook-receiver", () => {
  it("verifies the service's deliveries and processes each delivery id once", async () => {
    const { org, key } = await orgWithKey();
    const agent = await agentOf(org);
    await createPolicy(org, { max_amount: 1 });
    // The fixture receiver fails the first attempt: the service retries the same delivery.
    const hook = await receiver({ fail_first: 1 });
    const created = await call("/v1/webhook-endpoints", {
      method: "POST",
      key,
      body: { url: hook.url, eventTypes: ["assessment.denied"] },
    });
    expect(created.status).toBe(201);
    const assessed = await call("/v1/assess", {
      method: "POST",
      key,
      body: { mandate: payment(), agent_id: agent.id },
    });
    expect(assessed.json.decision).toBe("deny");
    const arrivals = await eventually(async () => {
      const log = await received(hook.name);
      return log.arrivals.length >= 2 ? log.arrivals : undefined;
    });
    expect(arrivals[0]?.webhook.id).toBe(arrivals[1]?.webhook.id);

    const handled: WebhookEvent[] = [];
    const app = webhookReceiver({
      secret: created.json.secret,
      jwks: await keySet(),
      endpointId: created.json.id,
      seen: memorySeenDeliveries(),
      handle: async (event) => {
        handled.push(event);
      },
    });
    const first = await replay(app, arrivals[0] as Arrival);
    expect(first.status).toBe(200);
    expect(await first.json()).toEqual({ received: true, duplicate: false });
    const retry = await replay(app, arrivals[1] as Arrival);
    expect(retry.status).toBe(200);
    expect(await retry.json()).toEqual({ received: true, duplicate: true });
    expect(handled).toHaveLength(1);
    expect(handled[0]).toMatchObject({
      type: "assessment.denied",
      data: { assessment_id: assessed.json.assessmentId, decision: "deny" },
    });

    const forged = new TextEncoder().encode(
      atob((arrivals[0] as Arrival).raw).replace('"deny"', '"approve"'),
    );
    const refused = await replay(app, arrivals[0] as Arrival, forged);
    expect(refused.status).toBe(400);
    expect(await refused.json()).toEqual({
      error: "signature_invalid",
      details: "signature_invalid",
    });
    expect(handled).toHaveLength(1);
  });
});

describe("examples/merchant-check", () => {
  const client = (key: string) =>
    createClient({ baseUrl: BASE, apiKey: key, fetch: (request) => SELF.fetch(request) });

  it("proceeds on an approve of a verified credential, the payload checked offline", async () => {
    const { key, body } = await provenAgentOrg("test");
    const verdict = await checkMandate({
      client: client(key),
      keys: { jwks: await keySet() },
      issuer: "https://risk-service.test",
      merchantId: "m-1",
      presented: await body(),
      allowTestMode: true,
    });
    expect(verdict).toMatchObject({ proceed: true, claims: { decision: "approve", aud: "m-1" } });
    expect(verdict.claims.mandate_verified).toBe(true);
  });

  it("stops on a decoded mandate's review: nobody's signature proves its claims", async () => {
    const { key } = await orgWithKey("test");
    const verdict = await checkMandate({
      client: client(key),
      keys: { jwks: await keySet() },
      issuer: "https://risk-service.test",
      merchantId: "m-1",
      presented: { mandate: payment() },
      allowTestMode: true,
    });
    expect(verdict).toMatchObject({ proceed: false, claims: { decision: "review" } });
    // The reason says why, in the service's words, after what the signed payload says.
    expect(verdict).toMatchObject({
      reason: expect.stringMatching(/^decision review, score \d+: Review: ./),
    });
  });

  it("stops on a deny", async () => {
    const { org, key } = await orgWithKey("test");
    await createPolicy(org, { max_amount: 1 });
    const verdict = await checkMandate({
      client: client(key),
      keys: { jwks: await keySet() },
      issuer: "https://risk-service.test",
      merchantId: "m-1",
      presented: { mandate: payment() },
      allowTestMode: true,
    });
    expect(verdict).toMatchObject({ proceed: false, claims: { decision: "deny" } });
    expect(verdict).toMatchObject({
      reason: expect.stringMatching(/^decision deny, score \d+: Denied: ./),
    });
  });

  it("refuses a test key's verdict unless told it is integrating in test mode", async () => {
    const { key } = await orgWithKey("test");
    const failure = await checkMandate({
      client: client(key),
      keys: { jwks: await keySet() },
      issuer: "https://risk-service.test",
      merchantId: "m-1",
      presented: { mandate: payment() },
    }).catch((e) => e);
    expect(failure).toMatchObject({ name: "VerificationError", code: "test_mode" });
  });

  it("throws when the payload is not from the expected issuer", async () => {
    const { key } = await orgWithKey("test");
    const failure = await checkMandate({
      client: client(key),
      keys: { jwks: await keySet() },
      issuer: "https://someone-else.test",
      merchantId: "m-1",
      presented: { mandate: payment() },
      allowTestMode: true,
    }).catch((e) => e);
    expect(failure).toMatchObject({ name: "VerificationError", code: "claim_invalid" });
  });
});
