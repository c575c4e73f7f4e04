import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { activatePlan } from "../billing/plan-activation";
import { stripe } from "../billing/provider";
import type { AppEnv } from "../http/context";
import { errorResponses, json } from "../http/schemas";
import { billingTags as tags } from "../schemas/billing";

const Received = z
  .object({
    received: z.literal(true),
    duplicate: z.boolean().optional(),
    ignored: z.boolean().optional(),
  })
  .openapi("ProviderWebhookReceipt");

const stripeWebhook = createRoute({
  method: "post",
  path: "/v1/billing/webhooks/stripe",
  tags,
  summary: "Stripe's webhook: a completed Checkout Session activates its plan",
  description:
    "No tenant credential: the `Stripe-Signature` header (HMAC-SHA256 over `t.body`, five " +
    "minutes' tolerance) is the proof. Idempotent on the Stripe event id.",
  responses: {
    200: json(Received, "Processed, or already processed"),
    ...errorResponses(400, 503),
  },
});

export function registerBillingWebhooks(app: OpenAPIHono<AppEnv>) {
  app.openapi(stripeWebhook, async (c) => {
    const raw = await c.req.text();
    const event = await stripe(c.env).verifyWebhook(
      raw,
      c.req.header("stripe-signature"),
      Date.now(),
    );
    if (event.type === "ignored") return c.json({ received: true as const, ignored: true }, 200);
    const activated = await activatePlan(c.env, event);
    if ("ignored" in activated) return c.json({ received: true as const, ignored: true }, 200);
    return c.json({ received: true as const, duplicate: activated.duplicate }, 200);
  });
}
