import { sql } from "drizzle-orm";
import { orgActor, publicBatch } from "../auth/tenant";
import type { Env } from "../env";
import { commit } from "../ledger/commit";
import type { stripe } from "./provider";

type Verified = Awaited<ReturnType<ReturnType<typeof stripe>["verifyWebhook"]>>;

/** The payment provider, as the ledger's actor of what its signed webhooks change. */
const STRIPE = { type: "provider", id: "stripe" };

/**
 * Activates the plan of a completed Checkout Session this service created, once per provider
 * event: `ignored` for a session that names no org, `duplicate` for an event seen before.
 */
export async function activatePlan(
  env: Env,
  event: Exclude<Verified, { type: "ignored" }>,
): Promise<{ ignored: true } | { duplicate: boolean }> {
  // Only a session this service created names an org; anything else is acknowledged, unused.
  const [found] = await publicBatch(env, { "app.checkout_session": event.session_id }, (db) => [
    db.execute<{ org_id: string; plan: string }>(
      sql`select org_id, plan from billing_checkouts where id = ${event.session_id}`,
    ),
  ]);
  const checkout = found.rows[0];
  if (!checkout) return { ignored: true };
  const change = {
    plan: checkout.plan,
    checkout_session: event.session_id,
    provider_event: event.event_id,
    customer: event.customer,
    subscription: event.subscription,
  };
  // Once per provider event: a retry of the webhook is a replay, and its write finds the
  // event already stored.
  const { results } = await commit(
    orgActor(env, checkout.org_id, STRIPE, null),
    {
      type: "billing.plan_activated",
      subject: { type: "billing_account", id: checkout.org_id },
      payload: change,
      once: [`billing.plan_activated:${event.event_id}`],
    },
    (db) => [
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
    ],
  );
  const fresh = results[0];
  const duplicate = (fresh as unknown as { rows: unknown[] }).rows.length === 0;
  return { duplicate };
}
