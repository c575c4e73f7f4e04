import type { z } from "@hono/zod-openapi";
import { and, eq, isNull, sql } from "drizzle-orm";
import type { Tenant } from "../auth/tenant";
import { listById, mapPage, type Page } from "../db/pagination";
import { webhookEndpoints } from "../db/schema";
import { ApiError, orNotFound } from "../errors";
import { commit } from "../ledger/commit";
import { newId } from "../lib/ids";
import { checkOutboundUrl, outboundPolicy } from "../net/outbound";
import { isoOrNull } from "../schemas/common";
import type { CreateWebhookEndpoint, WebhookEndpoint } from "../schemas/webhooks";
import { newEndpointSecret, sealEndpointSecret } from "./endpoint-secret";

/** Endpoints per org and mode, as at Stripe: every event fans out to each of them. */
export const MAX_ENDPOINTS = 16;

export type EndpointRow = typeof webhookEndpoints.$inferSelect;
type CreateBody = z.infer<typeof CreateWebhookEndpoint>;

/** The endpoint as the API shows it: never its token nor its secret. */
export function toEndpoint(row: EndpointRow): z.infer<typeof WebhookEndpoint> {
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
function visible(tenant: Tenant) {
  return and(eq(webhookEndpoints.livemode, tenant.livemode), isNull(webhookEndpoints.deletedAt));
}

/** Subscribes a URL (https, public host) to the caller's mode; the secret is in the answer only. */
export async function createEndpoint(
  tenant: Tenant,
  body: CreateBody,
): Promise<{ row: EndpointRow; secret: string }> {
  const checked = checkOutboundUrl(body.url, outboundPolicy(tenant.env));
  if (!checked.ok) {
    throw new ApiError("url_not_allowed", [{ path: "url", message: `refused: ${checked.reason}` }]);
  }
  const livemode = tenant.livemode;
  const [existing] = await tenant.batch((db) => [
    db.select({ n: sql<number>`count(*)::int` }).from(webhookEndpoints).where(visible(tenant)),
  ]);
  if ((existing[0]?.n ?? 0) >= MAX_ENDPOINTS) {
    throw new ApiError("endpoint_limit_reached", [
      { path: "url", message: `at most ${MAX_ENDPOINTS} endpoints per mode; delete one first` },
    ]);
  }
  const now = new Date();
  const id = newId(now.getTime());
  const orgId = (await tenant.caller()).orgId;
  const secret = newEndpointSecret();
  const row: EndpointRow = {
    id,
    orgId,
    url: checked.url.href,
    eventTypes: body.eventTypes ?? body.event_types ?? [],
    description: body.description ?? null,
    token: body.token ?? null,
    secret: await sealEndpointSecret(tenant.env, { orgId, endpointId: id }, secret),
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
  await commit(
    tenant,
    {
      type: "webhook_endpoint.created",
      subject: { type: "webhook_endpoint", id: row.id },
      payload: terms,
      once: [`webhook_endpoint.created:${row.id}`],
    },
    (db) => [db.insert(webhookEndpoints).values(row)],
  );
  return { row, secret };
}

/**
 * A new secret; the current one becomes the previous, signing beside it for `expiresIn`
 * seconds (none: retired at once). A previous secret still in its overlap is dropped: at most
 * two secrets sign at a time.
 */
export async function rotateSecret(
  tenant: Tenant,
  id: string,
  expiresIn: number,
): Promise<{ row: EndpointRow; secret: string }> {
  const [found] = await tenant.batch((db) => [
    db
      .select({ id: webhookEndpoints.id, orgId: webhookEndpoints.orgId })
      .from(webhookEndpoints)
      .where(and(eq(webhookEndpoints.id, id), visible(tenant))),
  ]);
  const endpoint = orNotFound(found[0]);
  const secret = newEndpointSecret();
  const sealed = await sealEndpointSecret(
    tenant.env,
    { orgId: endpoint.orgId, endpointId: id },
    secret,
  );
  const overlap = expiresIn > 0;
  // The rotation is on record; the secrets never are.
  const { results } = await commit(
    tenant,
    {
      type: "webhook_endpoint.secret_rotated",
      subject: { type: "webhook_endpoint", id },
      payload: { id, expires_in: expiresIn },
    },
    (db) => [
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
        .where(and(eq(webhookEndpoints.id, id), visible(tenant)))
        .returning(),
    ],
  );
  const [updated] = results;
  return { row: orNotFound(updated[0]), secret };
}

/** A page of the caller's endpoints of its mode, newest first. */
export async function listEndpoints(
  tenant: Tenant,
  query: { limit: number; cursor?: string | undefined },
): Promise<Page<z.infer<typeof WebhookEndpoint>>> {
  const list = await listById(tenant, webhookEndpoints, query, isNull(webhookEndpoints.deletedAt));
  return mapPage(list, toEndpoint);
}

/** Whether the caller sees the endpoint `id`: 404 otherwise. */
export async function findEndpoint(tenant: Tenant, id: string): Promise<void> {
  const [found] = await tenant.batch((db) => [
    db
      .select({ id: webhookEndpoints.id })
      .from(webhookEndpoints)
      .where(and(eq(webhookEndpoints.id, id), visible(tenant))),
  ]);
  orNotFound(found[0]);
}

/** Deletes an endpoint: its pending deliveries are cancelled, its records kept. */
export async function deleteEndpoint(tenant: Tenant, id: string): Promise<void> {
  await findEndpoint(tenant, id);
  // Recorded once per endpoint: a retry after a failed write records nothing new and still
  // deletes.
  await commit(
    tenant,
    {
      type: "webhook_endpoint.deleted",
      subject: { type: "webhook_endpoint", id },
      payload: { id },
      once: [`webhook_endpoint.deleted:${id}`],
    },
    (db) => [
      db
        .update(webhookEndpoints)
        .set({ deletedAt: new Date() })
        .where(and(eq(webhookEndpoints.id, id), isNull(webhookEndpoints.deletedAt))),
      db.execute(sql`
        update webhook_deliveries set status = 'cancelled', next_attempt_at = null,
          lease_until = null, completed_at = now()
        where endpoint_id = ${id} and status = 'pending'`),
    ],
  );
}
