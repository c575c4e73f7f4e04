import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { decide } from "../action/decide";
import { toDecision } from "../action/records";
import type { AppEnv } from "../http/context";
import { guarded } from "../http/route";
import { errorResponses, IdParam, json, jsonBody, rowId } from "../http/schemas";
import { ActionDecision, DecisionRequest, actionTags as tags } from "../schemas/actions";

const create = createRoute(
  guarded(
    "assess:write",
    {
      method: "post",
      path: "/v1/action-mandates/{id}/decisions",
      tags,
      summary: "Decide one action on one resource against the mandate: ALLOW or DENY",
      description:
        "Answers 201 with the decision, ALLOW or DENY, and every reason to deny. An ALLOW uses " +
        "one of the mandate's uses (and the amount) and, with an `audience`, carries a " +
        "single-use grant for that executor, valid for five minutes.",
      request: { params: IdParam, body: jsonBody(DecisionRequest) },
      responses: {
        201: json(ActionDecision, "The decision"),
        ...errorResponses(400, 401, 403, 404, 503),
      },
    },
    { liveOnly: true },
  ),
);

export function registerActionMandatesDecisions(app: OpenAPIHono<AppEnv>) {
  app.openapi(create, async (c) => {
    const mandateId = rowId(c.req.valid("param").id);
    const body = c.req.valid("json");
    const row = await decide(c.var.tenant, mandateId, {
      action: body.action,
      resource: body.resource,
      amount: body.amount ?? null,
      currency: body.currency ?? null,
      audience: body.audience ?? null,
      grant: body.grant,
    });
    return c.json(toDecision(row, false, new Date(), c.var.tenant.env), 201);
  });
}
