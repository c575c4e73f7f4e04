import type { Env } from "../env";
import { ApiError } from "../errors";
import { logError } from "../lib/log";
import { outboundPolicy } from "../net/outbound";
import { CURRENCY, PLANS, type PlanId } from "./plans";

/** A hosted checkout the provider created: where to send the customer. */
export interface CheckoutSession {
  id: string;
  url: string;
  /** Unix seconds. */
  expires_at: number;
}

/** A completed checkout, as the provider's verified webhook reports it. */
export interface CheckoutCompleted {
  event_id: string;
  session_id: string;
  customer: string | null;
  subscription: string | null;
}

/** A verified provider event: a completed checkout, or one the service does not act on. */
export type ProviderEvent =
  | ({ type: "checkout.session.completed" } & CheckoutCompleted)
  | { type: "ignored"; event_id: string; event_type: string };

/** The one seam between billing and the payment provider. */
export interface BillingProvider {
  createCheckout(input: {
    orgId: string;
    plan: Exclude<PlanId, "free">;
    successUrl: string;
    cancelUrl: string;
    idempotencyKey: string;
  }): Promise<CheckoutSession>;
  /** Verifies a webhook's signature over its raw body; throws provider_signature_invalid. */
  verifyWebhook(
    rawBody: string,
    signature: string | undefined,
    now: number,
  ): Promise<ProviderEvent>;
}

/** Stripe's default tolerance between a signature's timestamp and now. */
export const SIGNATURE_TOLERANCE_SECONDS = 300;

function apiBase(env: Env): string {
  const base = env.STRIPE_API_BASE ?? "https://api.stripe.com";
  let url: URL | null = null;
  try {
    url = new URL(base);
  } catch {
    url = null;
  }
  const local = outboundPolicy(env).allowLoopback;
  // Production only talks to Stripe over https; a local fake is for tests and development.
  if (!url || (url.protocol !== "https:" && !(local && url.protocol === "http:"))) {
    throw new ApiError("billing_provider_unavailable");
  }
  return base.replace(/\/$/, "");
}

/** Stripe, over fetch: the Checkout Sessions API and the `Stripe-Signature` webhook scheme. */
export function stripe(env: Env): BillingProvider {
  return {
    async createCheckout(input) {
      const secret = env.STRIPE_SECRET_KEY;
      if (!secret) throw new ApiError("billing_provider_unavailable");
      const plan = PLANS[input.plan];
      const form = new URLSearchParams({
        mode: "subscription",
        success_url: input.successUrl,
        cancel_url: input.cancelUrl,
        client_reference_id: input.orgId,
        "line_items[0][quantity]": "1",
        "line_items[0][price_data][currency]": CURRENCY,
        "line_items[0][price_data][unit_amount]": String(plan.amount),
        "line_items[0][price_data][recurring][interval]": "month",
        "line_items[0][price_data][product_data][name]": `Agent Risk ${plan.name}`,
        "metadata[org_id]": input.orgId,
        "metadata[plan]": input.plan,
        "subscription_data[metadata][org_id]": input.orgId,
        "subscription_data[metadata][plan]": input.plan,
      });
      let response: Response;
      try {
        response = await fetch(`${apiBase(env)}/v1/checkout/sessions`, {
          method: "POST",
          headers: {
            authorization: `Bearer ${secret}`,
            "content-type": "application/x-www-form-urlencoded",
            "idempotency-key": input.idempotencyKey,
            "stripe-version": "2024-06-20",
          },
          body: form.toString(),
          signal: AbortSignal.timeout(10_000),
        });
      } catch (error) {
        logError("stripe unreachable", { error: String(error) });
        throw new ApiError("billing_provider_unavailable");
      }
      const body = (await response.json().catch(() => null)) as Record<string, unknown> | null;
      if (!response.ok || !body || typeof body.id !== "string" || typeof body.url !== "string") {
        // Stripe's error type and code only: the body may echo request fields.
        const error = (body?.error ?? {}) as Record<string, unknown>;
        logError("stripe checkout failed", {
          status: response.status,
          type: error.type,
          code: error.code,
        });
        throw new ApiError("billing_provider_unavailable");
      }
      return { id: body.id, url: body.url, expires_at: Number(body.expires_at ?? 0) };
    },

    async verifyWebhook(rawBody, header, now) {
      const secret = env.STRIPE_WEBHOOK_SECRET;
      if (!secret) throw new ApiError("billing_provider_unavailable");
      const { timestamp, signatures } = parseSignatureHeader(header);
      if (timestamp === null || signatures.length === 0)
        throw refused("malformed signature header");
      if (Math.abs(now / 1000 - timestamp) > SIGNATURE_TOLERANCE_SECONDS) {
        throw refused("timestamp outside the tolerance window");
      }
      const expected = await hmacHex(secret, `${timestamp}.${rawBody}`);
      if (!signatures.some((s) => constantTimeEqual(s, expected)))
        throw refused("no matching signature");
      let event: { id?: unknown; type?: unknown; data?: { object?: Record<string, unknown> } };
      try {
        event = JSON.parse(rawBody);
      } catch {
        event = {};
      }
      if (typeof event?.id !== "string" || typeof event.type !== "string") {
        throw new ApiError("invalid_request", [{ path: "", message: "not a Stripe event" }]);
      }
      const object = event.data?.object ?? {};
      // A completed session activates its plan once paid: with a delayed payment method the
      // session completes `unpaid`, and `async_payment_succeeded` follows when it is paid.
      const paid = ["paid", "no_payment_required"].includes(String(object.payment_status));
      const activating =
        event.type === "checkout.session.async_payment_succeeded" ||
        (event.type === "checkout.session.completed" && paid);
      if (!activating || typeof object.id !== "string") {
        return { type: "ignored", event_id: event.id, event_type: event.type };
      }
      return {
        type: "checkout.session.completed",
        event_id: event.id,
        session_id: object.id,
        customer: typeof object.customer === "string" ? object.customer : null,
        subscription: typeof object.subscription === "string" ? object.subscription : null,
      };
    },
  };
}

function refused(reason: string): ApiError {
  return new ApiError("provider_signature_invalid", { reason });
}

/** `t=<unix seconds>,v1=<hex>[,v1=<hex>…]`; other schemes (v0) are ignored, as Stripe says. */
function parseSignatureHeader(header: string | undefined) {
  let timestamp: number | null = null;
  const signatures: string[] = [];
  for (const part of (header ?? "").split(",")) {
    const [key, value] = part.split("=", 2).map((s) => s.trim());
    if (key === "t" && value && /^\d+$/.test(value)) timestamp = Number(value);
    if (key === "v1" && value) signatures.push(value.toLowerCase());
  }
  return { timestamp, signatures };
}

export async function hmacHex(secret: string, payload: string): Promise<string> {
  const key = await crypto.subtle.importKey(
    "raw",
    new TextEncoder().encode(secret),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
  const mac = await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(payload));
  return [...new Uint8Array(mac)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

function constantTimeEqual(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}
