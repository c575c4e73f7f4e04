import { createRoute, type OpenAPIHono, type z } from "@hono/zod-openapi";
import { and, eq, isNull, sql } from "drizzle-orm";
import { auditEntries, webhookEndpoints } from "../db/schema";
import { ApiError, orNotFound } from "../errors";
import type { AppContext, AppEnv } from "../http/context";
import { decodeIdCursor, listById, mapPage, page } from "../http/pagination";
import { guarded } from "../http/route";
import { errorResponses, IdParam, json, jsonBody, rowId } from "../http/schemas";
import { record, recordDeferred } from "../ledger/ledger";
import { auditEntryRow } from "../ledger/ledger-postgres";
import { newId } from "../lib/ids";
import { checkOutboundUrl, outboundPolicy } from "../net/outbound";
import { isoOrNull, listOf, PageQuery } from "../schemas/common";
import {
  CreatedWebhookEndpoint,
  CreateWebhookEndpoint,
  DeletedWebhookEndpoint,
  ListDeliveriesQuery,
  RotateWebhookSecret,
  webhookTags as tags,
  WebhookDelivery,
  WebhookEndpoint,
} from "../schemas/webhooks";
import { newEndpointSecret, sealEndpointSecret } from "../webhooks/endpoint-secret";

/** Endpoints per org and mode, as at Stripe: every event fans out to each of them. */
export const MAX_ENDPOINTS = 16;
const create = createRoute(
  guarded("webhooks:write", {
    method: "post",
    path: "/v1/webhook-endpoints",
    tags,
    summary: "Subscribe a URL to events",
    description:
      "The endpoint receives the events of the caller's mode (a test key makes a test " +
      "endpoint). The URL must be https on a public host. The answer carries the endpoint's " +
      "Standard Webhooks signing secret, shown this once.",
    request: { body: jsonBody(CreateWebhookEndpoint) },
    responses: {
      201: json(CreatedWebhookEndpoint, "The endpoint, with its secret"),
      ...errorResponses(400, 401, 403, 503),
    },
  }),
);

const list = createRoute(
  guarded("webhooks:read", {
    method: "get",
    path: "/v1/webhook-endpoints",
    tags,
    summary: "List webhook endpoints of the caller's mode, newest first",
    request: { query: PageQuery },
    responses: {
      200: json(listOf(WebhookEndpoint, "WebhookEndpointList"), "A page of endpoints"),
      ...errorResponses(400, 401, 403, 503),
    },
  }),
);

const remove = createRoute(
  guarded("webhooks:write", {
    method: "delete",
    path: "/v1/webhook-endpoints/{id}",
    tags,
    summary: "Delete an endpoint: its pending deliveries are cancelled, its records kept",
    request: { params: IdParam },
    responses: {
      200: json(DeletedWebhookEndpoint, "Deleted"),
      ...errorResponses(401, 403, 404, 503),
    },
  }),
);

const rotate = createRoute(
  guarded("webhooks:write", {
    method: "post",
    path: "/v1/webhook-endpoints/{id}/rotate-secret",
    tags,
    summary: "Replace the endpoint's signing secret, the old one still signing for a while",
    description:
      "The answer carries the new secret, shown this once. Until `previous_secret_expires_at` " +
      "(`expires_in` seconds, default a day) each delivery carries a signature by each secret.",
    request: {
      params: IdParam,
      body: { required: false, content: { "application/json": { schema: RotateWebhookSecret } } },
    },
    responses: {
      200: json(CreatedWebhookEndpoint, "The endpoint, with its new secret"),
      ...errorResponses(400, 401, 403, 404, 503),
    },
  }),
);

const deliveries = createRoute(
  guarded("webhooks:read", {
    method: "get",
    path: "/v1/webhook-endpoints/{id}/deliveries",
    tags,
    summary: "The endpoint's deliveries, newest first, each with every attempt",
    request: { params: IdParam, query: ListDeliveriesQuery },
    responses: {
      200: json(listOf(WebhookDelivery, "WebhookDeliveryList"), "A page of deliveries"),
      ...errorResponses(400, 401, 403, 404, 503),
    },
  }),
);

type EndpointRow = typeof webhookEndpoints.$inferSelect;
type CreateBody = z.infer<typeof CreateWebhookEndpoint>;

function toEndpoint(row: EndpointRow): z.infer<typeof WebhookEndpoint> {
  return {
    object: "webhook_endpoint",
    id: row.id,
    url: row.url,
    event_types: row.eventTypes as z.infer<typeof WebhookEndpoint>["event_types"],
    description: row.description,
    token_set: row.token !== null,
    livemode: row.livemode,
    status: row.status,
    disabled_reason: row.disabledReason as "gone" | null,
    created: row.createdAt.toISOString(),
    disabled_at: isoOrNull(row.disabledAt),
    previous_secret_expires_at:
      row.previousSecretExpiresAt && row.previousSecretExpiresAt > new Date()
        ? row.previousSecretExpiresAt.toISOString()
        : null,
  };
}

/** The caller's live endpoints of its mode: another mode's, or a deleted one, is not found. */
function visible(c: AppContext) {
  return and(
    eq(webhookEndpoints.livemode, c.var.tenant.livemode),
    isNull(webhookEndpoints.deletedAt),
  );
}

async function createEndpoint(
  c: AppContext,
  body: CreateBody,
): Promise<{ row: EndpointRow; secret: string }> {
  const checked = checkOutboundUrl(body.url, outboundPolicy(c.env));
  if (!checked.ok) {
    throw new ApiError("url_not_allowed", [{ path: "url", message: `refused: ${checked.reason}` }]);
  }
  const livemode = c.var.tenant.livemode;
  const [existing] = await c.var.tenant.batch((db) => [
    db.select({ n: sql<number>`count(*)::int` }).from(webhookEndpoints).where(visible(c)),
  ]);
  if ((existing[0]?.n ?? 0) >= MAX_ENDPOINTS) {
    throw new ApiError("endpoint_limit_reached", [
      { path: "url", message: `at most ${MAX_ENDPOINTS} endpoints per mode; delete one first` },
    ]);
  }
  const now = new Date();
  const id = newId(now.getTime());
  const orgId = (await c.var.tenant.caller()).orgId;
  const secret = newEndpointSecret();
  const row: EndpointRow = {
    id,
    orgId,
    url: checked.url.href,
    eventTypes: body.eventTypes ?? body.event_types ?? [],
    description: body.description ?? null,
    token: body.token ?? null,
    secret: await sealEndpointSecret(c.env, { orgId, endpointId: id }, secret),
    previousSecret: null,
    previousSecretExpiresAt: null,
    livemode,
    status: "enabled",
    disabledReason: null,
    createdAt: now,
    disabledAt: null,
    deletedAt: null,
  };
  // The ledger holds the endpoint as the API shows it: never its token nor its secret.
  const terms = toEndpoint(row);
  const { entry } = await recordDeferred(
    c.env,
    await c.var.tenant.caller(),
    {
      type: "webhook_endpoint.created",
      subject: { type: "webhook_endpoint", id: row.id },
      payload: terms,
      once: [`webhook_endpoint.created:${row.id}`],
    },
    JSON.stringify(terms),
  );
  await c.var.tenant.batch((db) => [
    db.insert(auditEntries).values(auditEntryRow(entry)).onConflictDoNothing(),
    db.insert(webhookEndpoints).values(row),
  ]);
  return { row, secret };
}

/**
 * A new secret; the current one becomes the previous, signing beside it for `expiresIn`
 * seconds (none: retired at once). A previous secret still in its overlap is dropped: at most
 * two secrets sign at a time.
 */
async function rotateSecret(
  c: AppContext,
  id: string,
  expiresIn: number,
): Promise<{ row: EndpointRow; secret: string }> {
  const [found] = await c.var.tenant.batch((db) => [
    db
      .select({ id: webhookEndpoints.id, orgId: webhookEndpoints.orgId })
      .from(webhookEndpoints)
      .where(and(eq(webhookEndpoints.id, id), visible(c))),
  ]);
  const endpoint = orNotFound(found[0]);
  const secret = newEndpointSecret();
  const sealed = await sealEndpointSecret(c.env, { orgId: endpoint.orgId, endpointId: id }, secret);
  // The rotation is on record; the secrets never are.
  await record(c.env, await c.var.tenant.caller(), {
    type: "webhook_endpoint.secret_rotated",
    subject: { type: "webhook_endpoint", id },
    payload: { id, expires_in: expiresIn },
  });
  const overlap = expiresIn > 0;
  const [updated] = await c.var.tenant.batch((db) => [
    db
      .update(webhookEndpoints)
      .set({
        secret: sealed,
        previousSecret: overlap ? sql`${webhookEndpoints.secret}` : null,
        previousSecretExpiresAt: overlap
          ? sql`case when ${webhookEndpoints.secret} is not null
              then now() + make_interval(secs => ${expiresIn}) end`
          : null,
      })
      .where(and(eq(webhookEndpoints.id, id), visible(c)))
      .returning(),
  ]);
  return { row: orNotFound(updated[0]), secret };
}

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

export function registerWebhookEndpoints(app: OpenAPIHono<AppEnv>) {
  app.openapi(create, async (c) => {
    const { row, secret } = await createEndpoint(c, c.req.valid("json"));
    return c.json({ ...toEndpoint(row), secret }, 201);
  });

  app.openapi(rotate, async (c) => {
    const id = rowId(c.req.valid("param").id);
    // The body is optional: absent, the default overlap.
    const { expires_in } = RotateWebhookSecret.parse(c.req.valid("json") ?? {});
    const { row, secret } = await rotateSecret(c, id, expires_in);
    return c.json({ ...toEndpoint(row), secret }, 200);
  });

  app.openapi(list, async (c) => {
    const { limit, cursor } = c.req.valid("query");
    const list = await listById(c.var.tenant, webhookEndpoints, { limit, cursor }, visible(c));
    return c.json(mapPage(list, toEndpoint), 200);
  });

  app.openapi(remove, async (c) => {
    const id = rowId(c.req.valid("param").id);
    const [found] = await c.var.tenant.batch((db) => [
      db
        .select({ id: webhookEndpoints.id })
        .from(webhookEndpoints)
        .where(and(eq(webhookEndpoints.id, id), visible(c))),
    ]);
    orNotFound(found[0]);
    // Recorded before the change, once per endpoint: a retry after a failed write records
    // nothing new and still deletes.
    await record(c.env, await c.var.tenant.caller(), {
      type: "webhook_endpoint.deleted",
      subject: { type: "webhook_endpoint", id },
      payload: { id },
      once: `webhook_endpoint.deleted:${id}`,
    });
    await c.var.tenant.batch((db) => [
      db
        .update(webhookEndpoints)
        .set({ deletedAt: new Date() })
        .where(and(eq(webhookEndpoints.id, id), isNull(webhookEndpoints.deletedAt))),
      db.execute(sql`
        update webhook_deliveries set status = 'cancelled', next_attempt_at = null,
          lease_until = null, completed_at = now()
        where endpoint_id = ${id} and status = 'pending'`),
    ]);
    return c.json({ object: "webhook_endpoint" as const, id, deleted: true as const }, 200);
  });

  app.openapi(deliveries, async (c) => {
    const id = rowId(c.req.valid("param").id);
    const { limit, cursor, status } = c.req.valid("query");
    const after = decodeIdCursor(cursor);
    const [found, rows] = await c.var.tenant.batch((db) => [
      db
        .select({ id: webhookEndpoints.id })
        .from(webhookEndpoints)
        .where(and(eq(webhookEndpoints.id, id), visible(c))),
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
    return c.json(
      page(items, limit, (d) => d.id),
      200,
    );
  });
}
