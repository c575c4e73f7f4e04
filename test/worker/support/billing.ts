import { env } from "cloudflare:test";
import { call } from "./api";
import type { Json } from "./assess";
import { ownerSql } from "./db";

/** Puts an org on a plan with this period's meter at `assessments`, as months of use would. */
export async function seedBilling(orgId: string, plan: string, assessments: number) {
  await ownerSql`insert into billing_accounts (org_id, plan) values (${orgId}, ${plan})
                 on conflict (org_id) do update set plan = excluded.plan`;
  await ownerSql`insert into billing_usage (org_id, period_start, assessments)
                 values (${orgId}, (date_trunc('month', now() at time zone 'UTC'))::date, ${assessments})
                 on conflict (org_id, period_start) do update set assessments = excluded.assessments`;
}

/** This period's metered assessments, read as the owner. */
export async function metered(orgId: string): Promise<number> {
  const rows = (await ownerSql`select assessments from billing_usage
    where org_id = ${orgId}
      and period_start = (date_trunc('month', now() at time zone 'UTC'))::date`) as Json[];
  return Number(rows[0]?.assessments ?? 0);
}

/** The org's spend.* events, oldest first. */
export async function spendEvents(orgId: string) {
  return (await ownerSql`select id, type, data, livemode, dedupe_key from events
    where org_id = ${orgId} and type like 'spend.%' order by created_at, id`) as Json[];
}

/** The org's ledger entries of billing changes, in sequence. */
export async function billingLedger(orgId: string) {
  const rows = (await ownerSql`select type, actor_type, actor_id from audit_entries
    where org_id = ${orgId} and (type like 'billing.%' or type like 'spend.%')
    order by sequence`) as Json[];
  return rows;
}

export function getBilling(credential: { key?: string; token?: string }) {
  return call("/v1/billing", credential);
}

/** What the fake Stripe received, oldest first. */
export async function stripeRequests(): Promise<Json[]> {
  return (await fetch(`${env.TEST_FIXTURE_URL}/stripe/_requests`)).json();
}

/** Has the fake Stripe complete a session: the event body and `Stripe-Signature` it would send. */
export async function completeCheckout(session: string, timestamp?: number) {
  const res = await fetch(`${env.TEST_FIXTURE_URL}/stripe/_events/checkout.session.completed`, {
    method: "POST",
    body: JSON.stringify({ session, timestamp }),
  });
  if (res.status !== 200) throw new Error(`fake stripe: ${res.status}`);
  return (await res.json()) as { payload: string; signature: string };
}

/** Delivers a provider webhook to the Worker, as Stripe does. */
export function stripeWebhook(payload: string, signature?: string) {
  return call("/v1/billing/webhooks/stripe", {
    method: "POST",
    body: payload,
    headers: signature === undefined ? {} : { "stripe-signature": signature },
  });
}
