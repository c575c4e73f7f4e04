import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../http/context";
import { guarded } from "../http/route";
import { errorResponses, json } from "../http/schemas";
import { Dispatch, webhookTags as tags } from "../schemas/webhooks";
import { dispatchDue } from "../webhooks/dispatch";

/** Deliveries one dispatch call enqueues; `has_more` says to call again. */
const DISPATCH_LIMIT = 500;

const dispatch = createRoute(
  guarded("webhooks:write", {
    method: "post",
    path: "/v1/webhooks/dispatch",
    tags,
    summary: "Deliver every pending event of the caller's mode now",
    description:
      "Pending deliveries waiting for a retry are attempted now instead of at their scheduled " +
      "time. Delivery itself stays asynchronous: read the outcome from the delivery records.",
    responses: { 200: json(Dispatch, "What was enqueued"), ...errorResponses(401, 403, 503) },
  }),
);

export function registerWebhooksDispatch(app: OpenAPIHono<AppEnv>) {
  app.openapi(dispatch, async (c) => {
    const enqueued = await dispatchDue(c.var.tenant, DISPATCH_LIMIT);
    return c.json(
      {
        object: "webhook_dispatch" as const,
        enqueued,
        has_more: enqueued === DISPATCH_LIMIT,
      },
      200,
    );
  });
}
