import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import worker from "../../workers/main";
import { call } from "./support/api";
import { orgWithKey } from "./support/assess";
import {
  billingLedger,
  completeCheckout,
  getBilling,
  stripeRequests,
  stripeWebhook,
} from "./support/billing";
import { ownerSql } from "./support/db";
import { errorBody } from "./support/errors";

// docs/billing.md, Upgrading: Stripe Checkout against the fake Stripe on the fixture server.

const URLS = {
  success_url: "https://console.example.com/billing/done",
  cancel_url: "https://console.example.com/billing",
};

function startCheckout(key: string, plan = "starter", headers: Record<string, string> = {}) {
  return call("/v1/billing/checkout", {
    method: "POST",
    key,
    raw: true,
    body: { plan, ...URLS },
    headers,
  });
}

async function hmacHex(secret: string, payload: string): Promise<string> {
  const k = await crypto.subtle.importKey(
    "raw",
    new TextEncoder().encode(secret),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
  const mac = await crypto.subtle.sign("HMAC", k, new TextEncoder().encode(payload));
  return [...new Uint8Array(mac)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

describe("POST /v1/billing/checkout", () => {
  it("creates a Stripe Checkout Session, form-encoded with an idempotency key", async () => {
    const { org, key } = await orgWithKey();
    const res = await startCheckout(key, "starter", { "idempotency-key": "upgrade-1" });
    expect(res.status).toBe(201);
    expect(res.json).toEqual({
      id: expect.stringMatching(/^cs_test_/),
      object: "checkout_session",
      plan: "starter",
      url: `https://checkout.stripe.com/c/pay/${res.json.id}`,
      status: "open",
      expires_at: expect.any(Number),
    });
    const sent = (await stripeRequests()).filter((r) =>
      r.body.includes(encodeURIComponent(org.id)),
    );
    expect(sent).toHaveLength(1);
    const request = sent[0] as Record<string, any>;
    expect(request.path).toBe("/v1/checkout/sessions");
    expect(request.headers["content-type"]).toBe("application/x-www-form-urlencoded");
    expect(request.headers["idempotency-key"]).toBe(`${org.id}:upgrade-1`);
    expect(request.headers.authorization).toBe(`Bearer ${env.STRIPE_SECRET_KEY}`);
    const form = new URLSearchParams(request.body);
    expect(form.get("mode")).toBe("subscription");
    expect(form.get("client_reference_id")).toBe(org.id);
    expect(form.get("line_items[0][price_data][unit_amount]")).toBe("4900");
    expect(form.get("metadata[plan]")).toBe("starter");
    expect(form.get("success_url")).toBe(URLS.success_url);
    expect((await billingLedger(org.id)).map((e) => e.type)).toEqual(["billing.checkout_created"]);
  });

  it("answers the same session to a retry with the same Idempotency-Key", async () => {
    const { key } = await orgWithKey();
    const first = await startCheckout(key, "growth", { "idempotency-key": "retry-me" });
    const again = await startCheckout(key, "growth", { "idempotency-key": "retry-me" });
    expect(again.status).toBe(201);
    expect(again.json.id).toBe(first.json.id);
  });

  it("refuses a plan that is not for sale", async () => {
    const { key } = await orgWithKey();
    expect((await startCheckout(key, "free")).status).toBe(400);
    expect((await startCheckout(key, "platinum")).status).toBe(400);
  });

  it("keeps the plan until the provider reports the checkout completed", async () => {
    const { key } = await orgWithKey();
    await startCheckout(key, "starter");
    expect((await getBilling({ key })).json.plan.id).toBe("free");
  });
});

describe("the Stripe webhook", () => {
  it("activates the plan when a signed checkout.session.completed arrives", async () => {
    const { org, key } = await orgWithKey();
    const session = (await startCheckout(key, "growth")).json.id as string;
    const { payload, signature } = await completeCheckout(session);
    const res = await stripeWebhook(payload, signature);
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ received: true, duplicate: false });
    const billing = (await getBilling({ key })).json;
    expect(billing.plan.id).toBe("growth");
    expect(billing.customer).toMatch(/^cus_/);
    expect(await billingLedger(org.id)).toEqual([
      { type: "billing.checkout_created", actor_type: "api_key", actor_id: expect.any(String) },
      { type: "billing.plan_activated", actor_type: "provider", actor_id: "stripe" },
    ]);
    expect((await startCheckout(key, "growth")).error.error).toBe("plan_already_active");
  });

  it("a subscribed org cannot start a second subscription (no parallel plans, no downgrade)", async () => {
    const { key } = await orgWithKey();
    const session = (await startCheckout(key, "starter")).json.id as string;
    const { payload, signature } = await completeCheckout(session);
    expect((await stripeWebhook(payload, signature)).status).toBe(200);
    for (const plan of ["growth", "starter"]) {
      const again = await startCheckout(key, plan);
      expect(again.status).toBe(409);
      expect(again.error.error).toBe("plan_already_active");
    }
    expect((await getBilling({ key })).json.plan.id).toBe("starter");
  });

  it("an unpaid completion (a delayed payment method) does not activate the plan", async () => {
    const { key } = await orgWithKey();
    const session = (await startCheckout(key, "starter")).json.id as string;
    const { payload } = await completeCheckout(session);
    const unpaid = payload.replace('"payment_status":"paid"', '"payment_status":"unpaid"');
    expect(unpaid).not.toBe(payload);
    const t = Math.floor(Date.now() / 1000);
    const signature = `t=${t},v1=${await hmacHex(env.STRIPE_WEBHOOK_SECRET as string, `${t}.${unpaid}`)}`;
    const res = await stripeWebhook(unpaid, signature);
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ received: true, ignored: true });
    expect((await getBilling({ key })).json.plan.id).toBe("free");
  });

  it("refuses a forged signature and changes nothing", async () => {
    const { org, key } = await orgWithKey();
    const session = (await startCheckout(key, "starter")).json.id as string;
    const { payload } = await completeCheckout(session);
    const t = Math.floor(Date.now() / 1000);
    for (const signature of [
      `t=${t},v1=${await hmacHex("whsec_not_the_secret", `${t}.${payload}`)}`,
      `t=${t},v1=${"0".repeat(64)}`,
      "garbage",
      undefined,
    ]) {
      const res = await stripeWebhook(payload, signature);
      expect(res.status).toBe(400);
      expect(res.error.error).toBe("provider_signature_invalid");
    }
    // A genuine signature over other content (a tampered body) is refused too.
    const genuine = await completeCheckout(session);
    const tampered = genuine.payload.replace('"starter"', '"growth"');
    expect((await stripeWebhook(tampered, genuine.signature)).status).toBe(400);
    expect((await getBilling({ key })).json.plan.id).toBe("free");
    expect((await billingLedger(org.id)).map((e) => e.type)).toEqual(["billing.checkout_created"]);
  });

  it("refuses a replayed webhook signed outside the tolerance window", async () => {
    const { key } = await orgWithKey();
    const session = (await startCheckout(key, "starter")).json.id as string;
    const old = await completeCheckout(session, Math.floor(Date.now() / 1000) - 301);
    const res = await stripeWebhook(old.payload, old.signature);
    expect(res.status).toBe(400);
    expect(res.json).toEqual(
      errorBody("provider_signature_invalid", { reason: "timestamp outside the tolerance window" }),
    );
    expect((await getBilling({ key })).json.plan.id).toBe("free");
  });

  it("processes a redelivered event once (idempotent on the Stripe event id)", async () => {
    const { org, key } = await orgWithKey();
    const session = (await startCheckout(key, "starter")).json.id as string;
    const { payload, signature } = await completeCheckout(session);
    const first = await stripeWebhook(payload, signature);
    const again = await stripeWebhook(payload, signature);
    expect(first.json).toEqual({ received: true, duplicate: false });
    expect(again.status).toBe(200);
    expect(again.json).toEqual({ received: true, duplicate: true });
    const [count] = (await ownerSql`select count(*)::int as n from billing_provider_events
      where org_id = ${org.id}`) as { n: number }[];
    expect(count?.n).toBe(1);
    const activated = (await billingLedger(org.id)).filter(
      (e) => e.type === "billing.plan_activated",
    );
    expect(activated).toHaveLength(1);
  });

  it("acknowledges, without acting on, events for sessions it did not create", async () => {
    const payload = JSON.stringify({
      id: `evt_${crypto.randomUUID().replaceAll("-", "")}`,
      object: "event",
      type: "checkout.session.completed",
      data: { object: { id: "cs_test_unknown", object: "checkout.session" } },
    });
    const t = Math.floor(Date.now() / 1000);
    const signature = `t=${t},v1=${await hmacHex(env.STRIPE_WEBHOOK_SECRET as string, `${t}.${payload}`)}`;
    const res = await stripeWebhook(payload, signature);
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ received: true, ignored: true });
  });

  it("is never given another org's session: the plan lands on the org that checked out", async () => {
    const a = await orgWithKey();
    const b = await orgWithKey();
    const session = (await startCheckout(a.key, "starter")).json.id as string;
    const { payload, signature } = await completeCheckout(session);
    expect((await stripeWebhook(payload, signature)).status).toBe(200);
    expect((await getBilling({ key: a.key })).json.plan.id).toBe("starter");
    expect((await getBilling({ key: b.key })).json.plan.id).toBe("free");
  });
});

describe("POST /v1/billing/webhooks/stripe fails closed whatever the configuration", () => {
  /** The Worker as deployed without any Stripe configuration. */
  async function unconfigured(body: string, signature?: string) {
    const bare = { ...env, STRIPE_SECRET_KEY: undefined, STRIPE_WEBHOOK_SECRET: undefined };
    const ctx = createExecutionContext();
    const res = await worker.fetch(
      new Request("https://risk.test/v1/billing/webhooks/stripe", {
        method: "POST",
        headers: {
          "content-type": "application/json",
          ...(signature === undefined ? {} : { "stripe-signature": signature }),
        },
        body,
      }),
      bare as typeof env,
      ctx,
    );
    await waitOnExecutionContext(ctx);
    return { status: res.status, json: (await res.json()) as Record<string, any> };
  }

  it("an unsigned webhook is 400 with no provider configured, not 503", async () => {
    const res = await unconfigured(JSON.stringify({ id: "evt_1", type: "ping" }));
    expect(res.status).toBe(400);
    expect(res.json).toEqual(
      errorBody("provider_signature_invalid", { reason: "missing Stripe-Signature header" }),
    );
  });

  it("a signed webhook is 400 with no webhook secret configured: nothing can verify it", async () => {
    const { key } = await orgWithKey();
    const session = (await startCheckout(key, "starter")).json.id as string;
    const { payload, signature } = await completeCheckout(session);
    const res = await unconfigured(payload, signature);
    expect(res.status).toBe(400);
    expect(res.json).toEqual(
      errorBody("provider_signature_invalid", { reason: "no matching signature" }),
    );
    expect((await getBilling({ key })).json.plan.id).toBe("free");
  });

  it("an unsigned webhook is 400 with the provider configured", async () => {
    const res = await stripeWebhook(JSON.stringify({ id: "evt_2", type: "ping" }), undefined);
    expect(res.status).toBe(400);
    expect(res.json).toEqual(
      errorBody("provider_signature_invalid", { reason: "missing Stripe-Signature header" }),
    );
  });
});
