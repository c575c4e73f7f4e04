import { createRoute, type OpenAPIHono, type z } from "@hono/zod-openapi";
import { sql } from "drizzle-orm";
import { type AccountState, billingView, readAccount } from "../billing/account";
import { CURRENCY } from "../billing/plans";
import { stripe } from "../billing/provider";
import { auditEntries, billingAccounts, billingCheckouts } from "../db/schema";
import { ApiError } from "../errors";
import type { AppContext, AppEnv } from "../http/context";
import { guarded } from "../http/route";
import { errorResponses, json, jsonBody } from "../http/schemas";
import { recordDeferred } from "../ledger/ledger";
import { auditEntryRow } from "../ledger/ledger-postgres";
import { newId } from "../lib/ids";
import {
  Billing,
  Checkout,
  CreateCheckout,
  CreateSpendConfirmation,
  SetSpendingCap,
  SpendConfirmation,
  billingTags as tags,
} from "../schemas/billing";

/**
 * The bill is live: a test key may read it, never change it (a CI key must not be able to cap,
 * and so stop, production traffic).
 */
const LIVE_ONLY = { liveOnly: true } as const;

const get = createRoute(
  guarded("assess:read", {
    method: "get",
    path: "/v1/billing",
    tags,
    summary: "The plan, the current period, usage so far, the projected charge and the cap",
    responses: { 200: json(Billing, "The org's billing"), ...errorResponses(401, 403, 503) },
  }),
);

const setCap = createRoute(
  guarded(
    "assess:write",
    {
      method: "post",
      path: "/v1/billing/spending_cap",
      tags,
      summary: "Set or lower the spending cap on the period's usage charge",
      description:
        "Raising or lifting an existing cap answers 409 `spend_confirmation_required`: " +
        "that takes an owner's confirmation.",
      request: { body: jsonBody(SetSpendingCap) },
      responses: {
        200: json(Billing, "The org's billing, with the new cap"),
        ...errorResponses(400, 401, 403, 409, 503),
      },
    },
    LIVE_ONLY,
  ),
);

const confirm = createRoute(
  guarded(
    "assess:write",
    {
      method: "post",
      path: "/v1/billing/spend_confirmations",
      tags,
      summary: "An owner confirms spending further: raises or lifts the spending cap",
      request: { body: jsonBody(CreateSpendConfirmation) },
      responses: {
        201: json(SpendConfirmation, "The confirmation"),
        ...errorResponses(400, 401, 403, 409, 503),
      },
    },
    { sessionOnly: true, ...LIVE_ONLY },
  ),
);

const checkout = createRoute(
  guarded(
    "assess:write",
    {
      method: "post",
      path: "/v1/billing/checkout",
      tags,
      summary: "Start an upgrade: a hosted Stripe Checkout page for a paid plan",
      description:
        "An `Idempotency-Key` header makes a retry answer the same session. The plan becomes " +
        "active when the provider reports the checkout completed.",
      request: { body: jsonBody(CreateCheckout) },
      responses: {
        201: json(Checkout, "The checkout session"),
        ...errorResponses(400, 401, 403, 409, 503),
      },
    },
    LIVE_ONLY,
  ),
);

function billingAccount(orgId: string) {
  return { type: "billing_account", id: orgId };
}

/** Sets or lowers the cap; the ledger entry and the change are one transaction. */
async function setSpendingCap(c: AppContext, amount: number): Promise<AccountState> {
  const state = await readAccount(c.var.tenant);
  const previous = state.spending_cap;
  if (previous !== null && amount > previous) {
    throw new ApiError("spend_confirmation_required", {
      spending_cap: previous,
      message:
        "raising the cap takes an owner's confirmation (POST /v1/billing/spend_confirmations)",
    });
  }
  const who = await c.var.tenant.caller();
  const payload = { previous_spending_cap: previous, spending_cap: amount, currency: CURRENCY };
  const { entry } = await recordDeferred(
    c.env,
    who,
    {
      type: "billing.spending_cap_set",
      subject: billingAccount(who.orgId),
      payload,
      once: [`billing.spending_cap_set:${newId()}`],
    },
    JSON.stringify(payload),
  );
  const [, set] = await c.var.tenant.batch((db) => [
    db.insert(auditEntries).values(auditEntryRow(entry)).onConflictDoNothing(),
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
  ]);
  if (set.length === 0) throw new ApiError("spend_confirmation_required");
  return { ...state, spending_cap: amount };
}

/** An owner's confirmation: raises or lifts the cap, records `spend.confirmed`, and its event. */
async function confirmSpend(c: AppContext, cap: number | null) {
  const state = await readAccount(c.var.tenant);
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
  const who = await c.var.tenant.caller();
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
  const { entry } = await recordDeferred(
    c.env,
    who,
    {
      type: "spend.confirmed",
      subject: billingAccount(who.orgId),
      payload: confirmation,
      once: [`spend.confirmed:${confirmation.id}`],
    },
    JSON.stringify(confirmation),
  );
  const [, confirmed] = await c.var.tenant.batch(
    (db) => [
      db.insert(auditEntries).values(auditEntryRow(entry)).onConflictDoNothing(),
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
  if ((confirmed as unknown as { rows: unknown[] }).rows.length === 0) {
    throw new ApiError("spend_confirmation_required", {
      message: "the cap changed meanwhile; read it again and confirm",
    });
  }
  return confirmation;
}

async function startCheckout(c: AppContext, body: z.infer<typeof CreateCheckout>) {
  const state = await readAccount(c.var.tenant);
  if (state.plan === body.plan) throw new ApiError("plan_already_active", { plan: body.plan });
  // One subscription per org: a second checkout would start a second, parallel subscription
  // (and could downgrade). Plan changes of a subscribed org are not in this release.
  if (state.subscription !== null) {
    throw new ApiError("plan_already_active", {
      plan: state.plan,
      message: "the organization already has a subscription; plan changes are not supported yet",
    });
  }
  const who = await c.var.tenant.caller();
  const clientKey = c.req.header("idempotency-key");
  const session = await stripe(c.env).createCheckout({
    orgId: who.orgId,
    plan: body.plan,
    successUrl: body.success_url,
    cancelUrl: body.cancel_url,
    // Scoped to the org: two orgs' keys never meet at the provider.
    idempotencyKey: clientKey ? `${who.orgId}:${clientKey.slice(0, 200)}` : newId(),
  });
  const payload = { checkout_session: session.id, plan: body.plan };
  const { entry } = await recordDeferred(
    c.env,
    who,
    {
      type: "billing.checkout_created",
      subject: billingAccount(who.orgId),
      payload,
      once: [`billing.checkout_created:${session.id}`],
    },
    JSON.stringify(payload),
  );
  await c.var.tenant.batch((db) => [
    db.insert(auditEntries).values(auditEntryRow(entry)).onConflictDoNothing(),
    db
      .insert(billingCheckouts)
      .values({ id: session.id, plan: body.plan, url: session.url, expiresAt: session.expires_at })
      .onConflictDoNothing(),
  ]);
  return {
    id: session.id,
    object: "checkout_session" as const,
    plan: body.plan,
    url: session.url,
    status: "open" as const,
    expires_at: session.expires_at,
  };
}

export function registerBilling(app: OpenAPIHono<AppEnv>) {
  app.openapi(get, async (c) => c.json(billingView(await readAccount(c.var.tenant)), 200));

  app.openapi(setCap, async (c) => {
    const state = await setSpendingCap(c, c.req.valid("json").amount);
    return c.json(billingView(state), 200);
  });

  app.openapi(confirm, async (c) => {
    return c.json(await confirmSpend(c, c.req.valid("json").spending_cap), 201);
  });

  app.openapi(checkout, async (c) => c.json(await startCheckout(c, c.req.valid("json")), 201));
}
