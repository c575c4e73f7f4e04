import type { z } from "@hono/zod-openapi";
import type { Tenant } from "../auth/tenant";
import { billingCheckouts } from "../db/schema";
import { ApiError } from "../errors";
import { commit } from "../ledger/commit";
import { newId } from "../lib/ids";
import type { CreateCheckout } from "../schemas/billing";
import { readAccount } from "./account";
import { stripe } from "./provider";
import { billingAccount } from "./spending";

/**
 * Starts a checkout at the payment provider for a plan and records it. `clientKey` is the
 * request's `Idempotency-Key`, if any: a retry then reaches the same provider session.
 */
export async function startCheckout(
  tenant: Tenant,
  body: z.infer<typeof CreateCheckout>,
  clientKey: string | undefined,
) {
  const state = await readAccount(tenant);
  if (state.plan === body.plan) throw new ApiError("plan_already_active", { plan: body.plan });
  // One subscription per org: a second checkout would start a second, parallel subscription
  // (and could downgrade). Plan changes of a subscribed org are not in this release.
  if (state.subscription !== null) {
    throw new ApiError("plan_already_active", {
      plan: state.plan,
      message: "the organization already has a subscription; plan changes are not supported yet",
    });
  }
  const who = await tenant.caller();
  const session = await stripe(tenant.env).createCheckout({
    orgId: who.orgId,
    plan: body.plan,
    successUrl: body.success_url,
    cancelUrl: body.cancel_url,
    // Scoped to the org: two orgs' keys never meet at the provider.
    idempotencyKey: clientKey ? `${who.orgId}:${clientKey.slice(0, 200)}` : newId(),
  });
  const payload = { checkout_session: session.id, plan: body.plan };
  await commit(
    tenant,
    {
      type: "billing.checkout_created",
      subject: billingAccount(who.orgId),
      payload,
      once: [`billing.checkout_created:${session.id}`],
    },
    (db) => [
      db
        .insert(billingCheckouts)
        .values({
          id: session.id,
          plan: body.plan,
          url: session.url,
          expiresAt: session.expires_at,
        })
        .onConflictDoNothing(),
    ],
  );
  return {
    id: session.id,
    object: "checkout_session" as const,
    plan: body.plan,
    url: session.url,
    status: "open" as const,
    expires_at: session.expires_at,
  };
}
