import { sql } from "drizzle-orm";
import type { Tenant } from "../auth/tenant";
import { ApiError } from "../errors";
import { commit } from "../ledger/commit";
import { newId } from "../lib/ids";
import type { SpendDeniedEventData } from "../schemas/webhook-events";
import { CURRENCY, PERIOD_START_SQL, type SpendState, usageCharge } from "./plans";

export type { SpendState };

/**
 * The org's plan, cap and this period's meter, one row. The assess context reads the same row
 * in the database function `assess_context` (drizzle/0011_assess_context.sql).
 */
export const SPEND_STATE_SQL = sql`
  select coalesce(b.plan, 'free') as plan, b.spending_cap,
         coalesce(u.assessments, 0) as assessments, to_char(p.start, 'YYYY-MM-DD') as period_start
  from (select ${PERIOD_START_SQL} as start) p
  left join billing_accounts b on true
  left join billing_usage u on u.period_start = p.start`;

export function spendStateOf(row: Record<string, unknown> | undefined): SpendState | null {
  if (!row) return null;
  return {
    plan: String(row.plan),
    spending_cap: row.spending_cap === null ? null : Number(row.spending_cap),
    assessments: Number(row.assessments),
    period_start: String(row.period_start),
  };
}

/**
 * Whether billing one more assessment would take the period's usage charge above the cap.
 * No cap (or no account) never refuses.
 */
export function capReached(state: SpendState): boolean {
  if (state.spending_cap === null) return false;
  return usageCharge(state.plan, state.assessments + 1) > state.spending_cap;
}

/**
 * The spend guard, before anything of a billable assessment is computed or written: with the
 * cap reached, the call is refused (402) and `spend.denied` is recorded once per period and
 * cap, in the outbox and in the ledger. The refusal carries no decision: availability is never
 * approval.
 */
export async function guardSpend(tenant: Tenant, state: SpendState | null, livemode: boolean) {
  if (!livemode || !state || !capReached(state)) return;
  const cap = state.spending_cap as number;
  const data = {
    period_start: state.period_start,
    spending_cap: cap,
    amount_due: usageCharge(state.plan, state.assessments),
    currency: CURRENCY,
    assessments: state.assessments,
    plan: state.plan,
  } satisfies SpendDeniedEventData;
  const once = `spend.denied:${state.period_start}:${cap}`;
  // Once per period and cap: a repeat is a replay whose event insert finds its dedupe key.
  await commit(
    tenant,
    {
      type: "spend.denied",
      subject: { type: "billing_period", id: state.period_start },
      payload: data,
      once: [once],
    },
    (db) => [
      db.execute(sql`
        insert into events (id, type, data, livemode, dedupe_key)
        values (${newId()}, 'spend.denied', ${JSON.stringify(data)}::jsonb, true, ${once})
        on conflict do nothing`),
    ],
    { webhooks: true },
  );
  throw new ApiError("spending_cap_reached", {
    spending_cap: cap,
    amount_due: data.amount_due,
    currency: CURRENCY,
    message: "an owner must confirm a higher spending cap (POST /v1/billing/spend_confirmations)",
  });
}
