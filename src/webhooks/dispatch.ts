import { sql } from "drizzle-orm";
import type { Tenant } from "../auth/tenant";
import { ApiError } from "../errors";
import { type DeliveryMessage, LEASE_SECONDS, send } from "../outbox/enqueue";

/**
 * Leases up to `limit` pending deliveries of the caller's mode that wait for a retry (or are
 * due with no message in flight) and enqueues them now; answers how many were enqueued.
 */
export async function dispatchDue(tenant: Tenant, limit: number): Promise<number> {
  if (!tenant.env.WEBHOOK_QUEUE) throw new ApiError("webhook_queue_unavailable");
  const [leased] = await tenant.batch((db) => [
    db.execute<DeliveryMessage>(sql`
      update webhook_deliveries d
      set next_attempt_at = now(), lease_until = now() + make_interval(secs => ${LEASE_SECONDS})
      where d.id in (
        select w.id from webhook_deliveries w
        join webhook_endpoints ep on ep.org_id = w.org_id and ep.id = w.endpoint_id
        where w.status = 'pending' and ep.livemode = ${tenant.livemode}
          and ep.status = 'enabled' and ep.deleted_at is null
          and (w.attempt_started_at is null or w.attempt_started_at < now() - interval '60 seconds')
          -- Already due with a message in flight: sending another would only race it.
          and not (w.next_attempt_at <= now() and w.lease_until > now())
        order by w.next_attempt_at
        limit ${limit}
        for update of w skip locked)
      returning d.id as delivery_id, d.org_id`),
  ]);
  const messages = leased.rows as unknown as DeliveryMessage[];
  await send(tenant.env, messages);
  return messages.length;
}
