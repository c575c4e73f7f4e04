import type { z } from "@hono/zod-openapi";
import { and, eq, isNull, sql } from "drizzle-orm";
import type { Tenant } from "../auth/tenant";
import { decodeIdCursor, type Page, page } from "../db/pagination";
import { webhookEndpoints } from "../db/schema";
import { orNotFound } from "../errors";
import type { WebhookDelivery } from "../schemas/webhooks";

interface DeliveryRow {
  id: string;
  endpoint_id: string;
  event_id: string;
  event_type: string;
  event_created: string | number;
  status: string;
  attempt_count: number;
  attempts: {
    number: number;
    time: string;
    status_code: number | null;
    duration_ms: number;
    error: string | null;
    next_retry_at: string | null;
  }[];
  next_attempt_at: string | null;
  dead_lettered_at: string | null;
  created: string;
  completed_at: string | null;
}

const isoText = (text: string | null) => (text === null ? null : new Date(text).toISOString());

function toDelivery(row: DeliveryRow): z.infer<typeof WebhookDelivery> {
  return {
    object: "webhook_delivery",
    id: row.id,
    endpoint_id: row.endpoint_id,
    event: {
      id: row.event_id,
      type: row.event_type as z.infer<typeof WebhookDelivery>["event"]["type"],
      created: Number(row.event_created),
    },
    status: row.status as z.infer<typeof WebhookDelivery>["status"],
    attempt_count: row.attempt_count,
    attempts: row.attempts.map((a) => ({
      ...a,
      time: new Date(a.time).toISOString(),
      next_retry_at: isoText(a.next_retry_at),
    })),
    next_attempt_at: isoText(row.next_attempt_at),
    dead_lettered_at: isoText(row.dead_lettered_at),
    created: new Date(row.created).toISOString(),
    completed_at: isoText(row.completed_at),
  };
}

/** The caller's live endpoints of its mode: another mode's, or a deleted one, is not found. */
function visible(tenant: Tenant) {
  return and(eq(webhookEndpoints.livemode, tenant.livemode), isNull(webhookEndpoints.deletedAt));
}

/** A page of the endpoint's deliveries, newest first, each with every attempt (404: no endpoint). */
export async function listDeliveries(
  tenant: Tenant,
  id: string,
  query: { limit: number; cursor?: string | undefined; status?: string | undefined },
): Promise<Page<z.infer<typeof WebhookDelivery>>> {
  const { limit, cursor, status } = query;
  const after = decodeIdCursor(cursor);
  const [found, rows] = await tenant.batch((db) => [
    db
      .select({ id: webhookEndpoints.id })
      .from(webhookEndpoints)
      .where(and(eq(webhookEndpoints.id, id), visible(tenant))),
    db.execute<Record<string, unknown>>(sql`
        select d.id, d.endpoint_id, d.event_id, e.type as event_type,
          floor(extract(epoch from e.created_at))::bigint as event_created,
          d.status, d.attempts as attempt_count, d.next_attempt_at, d.dead_lettered_at,
          d.created_at as created, d.completed_at,
          coalesce((
            select json_agg(json_build_object(
              'number', a.number, 'time', a.started_at, 'status_code', a.status_code,
              'duration_ms', a.duration_ms, 'error', a.error, 'next_retry_at', a.next_retry_at)
              order by a.number)
            from webhook_attempts a where a.delivery_id = d.id), '[]'::json) as attempts
        from webhook_deliveries d join events e on e.id = d.event_id
        where d.endpoint_id = ${id}
          ${status ? sql`and d.status = ${status}` : sql``}
          ${after ? sql`and d.id < ${after}` : sql``}
        order by d.id desc
        limit ${limit + 1}`),
  ]);
  orNotFound(found[0]);
  const items = (rows.rows as unknown as DeliveryRow[]).map(toDelivery);
  return page(items, limit, (d) => d.id);
}
