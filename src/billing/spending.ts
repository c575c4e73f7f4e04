import { sql } from "drizzle-orm";
import type { Tenant } from "../auth/tenant";
import { billingAccounts } from "../db/schema";
import { ApiError } from "../errors";
import { commit } from "../ledger/commit";
import { newId } from "../lib/ids";
import { type AccountState, readAccount } from "./account";
import { CURRENCY } from "./plans";

/** The ledger's subject for the org's bill. */
export function billingAccount(orgId: string) {
  return { type: "billing_account", id: orgId };
}

/** Sets or lowers the cap; the ledger entry and the change are one transaction. */
export async function setSpendingCap(tenant: Tenant, amount: number): Promise<AccountState> {
  const state = await readAccount(tenant);
  const previous = state.spending_cap;
  if (previous !== null && amount > previous) {
    throw new ApiError("spend_confirmation_required", {
      spending_cap: previous,
      message:
        "raising the cap takes an owner's confirmation (POST /v1/billing/spend_confirmations)",
    });
  }
  const who = await tenant.caller();
  const payload = { previous_spending_cap: previous, spending_cap: amount, currency: CURRENCY };
  const { results } = await commit(
    tenant,
    {
      type: "billing.spending_cap_set",
      subject: billingAccount(who.orgId),
      payload,
    },
    (db) => [
      db
        .insert(billingAccounts)
        .values({ spendingCap: amount })
        .onConflictDoUpdate({
          target: billingAccounts.orgId,
          set: { spendingCap: amount, updatedAt: sql`now()` },
          // Never a raise: a confirmation that raced ahead keeps its higher cap.
          setWhere: sql`billing_accounts.spending_cap is null or billing_accounts.spending_cap >= ${amount}`,
        })
        .returning({ cap: billingAccounts.spendingCap }),
    ],
  );
  const [set] = results;
  if (set.length === 0) throw new ApiError("spend_confirmation_required");
  return { ...state, spending_cap: amount };
}

/** An owner's confirmation: raises or lifts the cap, records `spend.confirmed`, and its event. */
export async function confirmSpend(tenant: Tenant, cap: number | null) {
  const state = await readAccount(tenant);
  const previous = state.spending_cap;
  if (previous === null || (cap !== null && cap <= previous)) {
    throw new ApiError("invalid_request", [
      {
        path: "spending_cap",
        message:
          previous === null
            ? "there is no spending cap to raise or lift"
            : "a confirmation raises (or, with null, lifts) the cap; lower it with POST /v1/billing/spending_cap",
      },
    ]);
  }
  const who = await tenant.caller();
  const now = new Date();
  const confirmation = {
    id: newId(now.getTime()),
    object: "spend_confirmation" as const,
    period_start: state.period_start,
    previous_spending_cap: previous,
    spending_cap: cap,
    currency: CURRENCY,
    confirmed_by: who.actor.id,
    created: Math.floor(now.getTime() / 1000),
  };
  const { results } = await commit(
    tenant,
    {
      type: "spend.confirmed",
      subject: billingAccount(who.orgId),
      payload: confirmation,
      once: [`spend.confirmed:${confirmation.id}`],
    },
    (db) => [
      // The event only with the change: a confirmation that lost a race to another leaves none.
      db.execute(sql`
      with account as (
        insert into billing_accounts (spending_cap) values (${cap}::bigint)
        on conflict (org_id) do update set spending_cap = excluded.spending_cap, updated_at = now()
        where billing_accounts.spending_cap is not distinct from ${previous}::bigint
        returning org_id
      )
      insert into events (id, type, data, livemode, dedupe_key)
      select ${confirmation.id}::uuid, 'spend.confirmed', ${JSON.stringify(confirmation)}::jsonb,
             true, ${`spend.confirmed:${confirmation.id}`}
      from account
      returning id`),
    ],
    { webhooks: true },
  );
  const [confirmed] = results;
  if ((confirmed as unknown as { rows: unknown[] }).rows.length === 0) {
    throw new ApiError("spend_confirmation_required", {
      message: "the cap changed meanwhile; read it again and confirm",
    });
  }
  return confirmation;
}
