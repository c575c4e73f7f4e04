import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { sql } from "drizzle-orm";
import { stripe } from "../billing/provider";
import { orgBatchOf, publicBatch } from "../db/tenant";
import type { AppEnv } from "../http/context";
import { errorResponses, json } from "../http/schemas";
import { recordAs } from "../ledger/ledger";
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

const STRIPE = { type: "provider", id: "stripe" };

export function registerBillingWebhooks(app: OpenAPIHono<AppEnv>) {
  app.openapi(stripeWebhook, async (c) => {
    const raw = await c.req.text();
    const event = await stripe(c.env).verifyWebhook(
      raw,
      c.req.header("stripe-signature"),
      Date.now(),
    );
    if (event.type === "ignored") return c.json({ received: true as const, ignored: true }, 200);
    // Only a session this service created names an org; anything else is acknowledged, unused.
    const [found] = await publicBatch(c.env, { "app.checkout_session": event.session_id }, (db) => [
      db.execute<{ org_id: string; plan: string }>(
        sql`select org_id, plan from billing_checkouts where id = ${event.session_id}`,
      ),
    ]);
    const checkout = found.rows[0];
    if (!checkout) return c.json({ received: true as const, ignored: true }, 200);
    const change = {
      plan: checkout.plan,
      checkout_session: event.session_id,
      provider_event: event.event_id,
      customer: event.customer,
      subscription: event.subscription,
    };
    // Ledger first, once per provider event: a retry after a failed write still records it once.
    await recordAs(c.env, checkout.org_id, STRIPE, {
      type: "billing.plan_activated",
      subject: { type: "billing_account", id: checkout.org_id },
      payload: change,
      once: `billing.plan_activated:${event.event_id}`,
    });
    const [fresh] = await orgBatchOf(c.env, checkout.org_id, (db) => [
      db.execute(sql`
        with fresh as (
          insert into billing_provider_events (id, type)
          values (${event.event_id}, 'checkout.session.completed')
          on conflict do nothing
          returning id
        ),
        account as (
          insert into billing_accounts (plan, provider_customer_id, provider_subscription_id)
          select ${checkout.plan}, ${event.customer}, ${event.subscription} from fresh
          on conflict (org_id) do update set plan = excluded.plan,
            provider_customer_id = coalesce(excluded.provider_customer_id,
                                            billing_accounts.provider_customer_id),
            provider_subscription_id = excluded.provider_subscription_id, updated_at = now()
          returning org_id
        ),
        done as (
          update billing_checkouts set status = 'complete', completed_at = now()
          where id = ${event.session_id} and exists (select 1 from fresh)
        )
        select id from fresh`),
    ]);
    const duplicate = (fresh as unknown as { rows: unknown[] }).rows.length === 0;
    return c.json({ received: true as const, duplicate }, 200);
  });
}
