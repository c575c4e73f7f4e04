import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { sql } from "drizzle-orm";
import { ApiError } from "../errors";
import type { AppEnv } from "../http/context";
import { guarded } from "../http/route";
import { errorResponses, json } from "../http/schemas";
import { Dispatch, webhookTags as tags } from "../schemas/webhooks";
import { type DeliveryMessage, LEASE_SECONDS, send } from "../webhooks/enqueue";

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
    if (!c.env.WEBHOOK_QUEUE) throw new ApiError("webhook_queue_unavailable");
    const [leased] = await c.var.tenant.batch((db) => [
      db.execute<DeliveryMessage>(sql`
        update webhook_deliveries d
        set next_attempt_at = now(), lease_until = now() + make_interval(secs => ${LEASE_SECONDS})
        where d.id in (
          select w.id from webhook_deliveries w
          join webhook_endpoints ep on ep.org_id = w.org_id and ep.id = w.endpoint_id
          where w.status = 'pending' and ep.livemode = ${c.var.tenant.livemode}
            and ep.status = 'enabled' and ep.deleted_at is null
            and (w.attempt_started_at is null or w.attempt_started_at < now() - interval '60 seconds')
            -- Already due with a message in flight: sending another would only race it.
            and not (w.next_attempt_at <= now() and w.lease_until > now())
          order by w.next_attempt_at
          limit ${DISPATCH_LIMIT}
          for update of w skip locked)
        returning d.id as delivery_id, d.org_id`),
    ]);
    const messages = leased.rows as unknown as DeliveryMessage[];
    await send(c.env, messages);
    return c.json(
      {
        object: "webhook_dispatch" as const,
        enqueued: messages.length,
        has_more: messages.length === DISPATCH_LIMIT,
      },
      200,
    );
  });
}
