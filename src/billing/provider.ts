import type Stripe from "stripe";
import type { Env } from "../env";
import { ApiError } from "../errors";
import { logError } from "../lib/log";
import { outboundPolicy } from "../net/outbound";
import { PLANS, type PlanId } from "../schemas/billing";
import { CURRENCY } from "./plans";

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
/** A checkout request that Stripe does not answer in this long fails (503). */
const STRIPE_TIMEOUT_MS = 10_000;

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

/**
 * The official client, over the Worker's fetch. `STRIPE_API_BASE` may carry a path (the tests'
 * fake lives under `/stripe` of the fixture server): the client knows only a host, so its fetch
 * puts the path back in front of every request's.
 */
function client(sdk: typeof Stripe, env: Env, secret: string): Stripe {
  const base = new URL(apiBase(env));
  const prefix = base.pathname.replace(/\/$/, "");
  const fetchAtBase: typeof fetch = (input, init) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    url.pathname = prefix + url.pathname;
    return fetch(url, init);
  };
  const https = base.protocol === "https:";
  return new sdk(secret, {
    httpClient: sdk.createFetchHttpClient(prefix ? fetchAtBase : fetch),
    host: base.hostname,
    port: base.port || (https ? 443 : 80),
    protocol: https ? "https" : "http",
    timeout: STRIPE_TIMEOUT_MS,
    // One attempt: the caller's retry (with its Idempotency-Key) is the retry.
    maxNetworkRetries: 0,
    telemetry: false,
  });
}

/**
 * The package, evaluated on the first billing call rather than with the Worker: it is the
 * largest module the service ships (0.6 MB) and only checkout and its webhook use it, so every
 * isolate that never bills (most; and every test file's, docs/ci.md) starts without it.
 */
let loaded: Promise<typeof Stripe> | undefined;
function stripeSdk(): Promise<typeof Stripe> {
  loaded ??= import("stripe").then((module) => module.default);
  return loaded;
}

/** Stripe through its official package: Checkout Sessions and `constructEventAsync`. */
export function stripe(env: Env): BillingProvider {
  return {
    async createCheckout(input) {
      const secret = env.STRIPE_SECRET_KEY;
      if (!secret) throw new ApiError("billing_provider_unavailable");
      const plan = PLANS[input.plan];
      const metadata = { org_id: input.orgId, plan: input.plan };
      const sdk = await stripeSdk();
      let session: Stripe.Checkout.Session;
      try {
        session = await client(sdk, env, secret).checkout.sessions.create(
          {
            mode: "subscription",
            success_url: input.successUrl,
            cancel_url: input.cancelUrl,
            client_reference_id: input.orgId,
            line_items: [
              {
                quantity: 1,
                price_data: {
                  currency: CURRENCY,
                  unit_amount: plan.amount,
                  recurring: { interval: "month" },
                  product_data: { name: `Agent Risk ${plan.name}` },
                },
              },
            ],
            metadata,
            subscription_data: { metadata },
          },
          { idempotencyKey: input.idempotencyKey },
        );
      } catch (error) {
        // Stripe's error type and code only: its message may echo request fields.
        const stripeError = error instanceof sdk.errors.StripeError ? error : null;
        logError("stripe checkout failed", {
          status: stripeError?.statusCode,
          type: stripeError?.type ?? "unreachable",
          code: stripeError?.code,
        });
        throw new ApiError("billing_provider_unavailable");
      }
      if (typeof session.url !== "string") {
        logError("stripe checkout failed", { type: "no_url" });
        throw new ApiError("billing_provider_unavailable");
      }
      return { id: session.id, url: session.url, expires_at: Number(session.expires_at ?? 0) };
    },

    async verifyWebhook(rawBody, header, now) {
      // Refused before anything else, configured or not: an unsigned request is the sender's
      // fault (400), never the service's (503).
      if (!header) throw refused("missing Stripe-Signature header");
      const secret = env.STRIPE_WEBHOOK_SECRET;
      if (!secret) {
        // Nothing can be verified: every signature is refused. Stripe retries a non-2xx for
        // days, so events sent before the secret is configured still arrive.
        logError("stripe webhook secret not configured");
        throw refused("no matching signature");
      }
      const sdk = await stripeSdk();
      let event: Stripe.Event;
      try {
        event = await sdk.webhooks.constructEventAsync(
          rawBody,
          header,
          secret,
          SIGNATURE_TOLERANCE_SECONDS,
          sdk.createSubtleCryptoProvider(),
          now,
        );
      } catch (error) {
        if (error instanceof sdk.errors.StripeSignatureVerificationError) {
          throw refused(signatureFailure(error.message));
        }
        throw new ApiError("invalid_request", [{ path: "", message: "not a Stripe event" }]);
      }
      if (typeof event?.id !== "string" || typeof event.type !== "string") {
        throw new ApiError("invalid_request", [{ path: "", message: "not a Stripe event" }]);
      }
      const object = (event.data?.object ?? {}) as unknown as Record<string, unknown>;
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

/** The package's reason, in this service's words (its messages are long and link to docs). */
function signatureFailure(message: string): string {
  if (/timestamp outside the tolerance/i.test(message)) {
    return "timestamp outside the tolerance window";
  }
  if (/unable to extract timestamp and signatures/i.test(message)) {
    return "malformed signature header";
  }
  return "no matching signature";
}
