import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { billingView, readAccount } from "../billing/account";
import { startCheckout } from "../billing/checkout";
import { confirmSpend, setSpendingCap } from "../billing/spending";
import type { AppEnv } from "../http/context";
import { guarded } from "../http/route";
import { errorResponses, json, jsonBody } from "../http/schemas";
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

export function registerBilling(app: OpenAPIHono<AppEnv>) {
  app.openapi(get, async (c) => c.json(billingView(await readAccount(c.var.tenant)), 200));

  app.openapi(setCap, async (c) => {
    const state = await setSpendingCap(c.var.tenant, c.req.valid("json").amount);
    return c.json(billingView(state), 200);
  });

  app.openapi(confirm, async (c) => {
    return c.json(await confirmSpend(c.var.tenant, c.req.valid("json").spending_cap), 201);
  });

  app.openapi(checkout, async (c) => {
    const clientKey = c.req.header("idempotency-key");
    return c.json(await startCheckout(c.var.tenant, c.req.valid("json"), clientKey), 201);
  });
}
