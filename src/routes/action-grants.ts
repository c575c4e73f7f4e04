import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { toRedemption } from "../action/records";
import { redeem } from "../action/redeem";
import type { AppEnv } from "../http/context";
import { guarded } from "../http/route";
import { errorResponses, json, jsonBody } from "../http/schemas";
import { ActionRedemption, RedeemRequest, actionTags as tags } from "../schemas/actions";

const redeemGrant = createRoute(
  guarded("assess:write", {
    method: "post",
    path: "/v1/action-grants/redeem",
    tags,
    summary: "Redeem a grant, once, as the executor about to act",
    description:
      "The executor presents the grant and what it is about to do. A valid, unexpired grant " +
      "whose details match, for this executor, redeems exactly once, whatever the " +
      "concurrency: every later attempt answers 409 `grant_already_redeemed` naming the first " +
      "redemption. Only a 200 from here proves the gate was passed.",
    request: { body: jsonBody(RedeemRequest) },
    responses: {
      200: json(ActionRedemption, "The one redemption of the grant"),
      ...errorResponses(400, 401, 403, 404, 409, 503),
    },
  }),
);

export function registerActionGrants(app: OpenAPIHono<AppEnv>) {
  app.openapi(redeemGrant, async (c) => {
    const body = c.req.valid("json");
    const row = await redeem(c.var.tenant, body.grant, {
      action: body.action,
      resource: body.resource,
      amount: body.amount ?? null,
      currency: body.currency ?? null,
    });
    return c.json(toRedemption(row), 200);
  });
}
