/** Webhooks: endpoints, one delivery per (event, endpoint), and every attempt at it. */
import { sql } from "drizzle-orm";
import {
  boolean,
  check,
  foreignKey,
  index,
  integer,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
  uuid,
} from "drizzle-orm/pg-core";
import { DELIVERY_STATUSES, ENDPOINT_STATUSES } from "../../schemas/vocabulary";
import { createdAtMs } from "./columns";
import { tenantOrg } from "./foundation";
import { events } from "./ledger";

/**
 * Where an org's events go. `event_types` empty means every event. An endpoint receives the
 * events of its own mode only (test keys make test endpoints, as at Stripe). Deletion keeps the
 * row (its deliveries stay on record) but hides it. `secret` is the Standard Webhooks signing
 * secret, sealed (src/webhooks/endpoint-secret.ts); after a rotation `previous_secret` still
 * signs until `previous_secret_expires_at`. Endpoints made before secrets existed have none
 * until their first rotation.
 */
export const webhookEndpoints = pgTable(
  "webhook_endpoints",
  {
    id: uuid("id").primaryKey(),
    orgId: tenantOrg(),
    url: text("url").notNull(),
    eventTypes: text("event_types").array().notNull(),
    description: text("description"),
    /** Sent as `x-service-token`; never returned by the API after it is set. */
    token: text("token"),
    secret: text("secret"),
    previousSecret: text("previous_secret"),
    previousSecretExpiresAt: timestamp("previous_secret_expires_at", {
      withTimezone: true,
      precision: 3,
    }),
    livemode: boolean("livemode").notNull(),
    status: text("status", { enum: ENDPOINT_STATUSES }).notNull().default("enabled"),
    disabledReason: text("disabled_reason"),
    createdAt: createdAtMs(),
    disabledAt: timestamp("disabled_at", { withTimezone: true, precision: 3 }),
    deletedAt: timestamp("deleted_at", { withTimezone: true, precision: 3 }),
  },
  (t) => [
    uniqueIndex("webhook_endpoints_org_id_idx").on(t.orgId, t.id),
    // The fan-out trigger looks up an org's live endpoints on every event.
    index("webhook_endpoints_fanout_idx")
      .on(t.orgId, t.livemode)
      .where(sql`status = 'enabled' AND deleted_at IS NULL`),
    check(
      "webhook_endpoints_previous_secret_expires",
      sql`(previous_secret IS NULL) = (previous_secret_expires_at IS NULL)`,
    ),
  ],
);

/**
 * One event on its way to one endpoint. Its id is the `id` of the delivery body, stable across
 * retries. `lease_until` says a queue message for it is in flight until then (the fan-out
 * gives the writer a minute to send the first; the Cron sweep re-enqueues a due delivery whose
 * lease ran out); `attempt_started_at` keeps two messages from attempting it at once.
 */
export const webhookDeliveries = pgTable(
  "webhook_deliveries",
  {
    id: uuid("id").primaryKey(),
    orgId: tenantOrg(),
    eventId: uuid("event_id").notNull(),
    endpointId: uuid("endpoint_id").notNull(),
    status: text("status", { enum: DELIVERY_STATUSES }).notNull().default("pending"),
    attempts: integer("attempts").notNull().default(0),
    nextAttemptAt: timestamp("next_attempt_at", { withTimezone: true, precision: 3 }),
    leaseUntil: timestamp("lease_until", { withTimezone: true, precision: 3 }),
    attemptStartedAt: timestamp("attempt_started_at", { withTimezone: true, precision: 3 }),
    deadLetteredAt: timestamp("dead_lettered_at", { withTimezone: true, precision: 3 }),
    createdAt: createdAtMs(),
    completedAt: timestamp("completed_at", { withTimezone: true, precision: 3 }),
  },
  (t) => [
    foreignKey({
      columns: [t.orgId, t.endpointId],
      foreignColumns: [webhookEndpoints.orgId, webhookEndpoints.id],
    }),
    // Within the org: a delivery can only ever carry its own org's event.
    foreignKey({ columns: [t.orgId, t.eventId], foreignColumns: [events.orgId, events.id] }),
    uniqueIndex("webhook_deliveries_event_endpoint_idx").on(t.eventId, t.endpointId),
    uniqueIndex("webhook_deliveries_org_id_idx").on(t.orgId, t.id),
    index("webhook_deliveries_endpoint_idx").on(t.orgId, t.endpointId, t.id),
    // The deliveries a transaction's events fanned out to, found by the transaction's time
    // (deliveriesMadeHere): the writer enqueues them in the round trip that wrote them.
    index("webhook_deliveries_made_idx").on(t.orgId, t.createdAt),
    // Due deliveries with no message in flight: what the sweep and the dispatch route look for.
    index("webhook_deliveries_due_idx").on(t.nextAttemptAt).where(sql`status = 'pending'`),
    check(
      "webhook_deliveries_pending_is_scheduled",
      sql`(status = 'pending') = (next_attempt_at IS NOT NULL)`,
    ),
  ],
);

/** Every attempt at a delivery, as it happened. */
export const webhookAttempts = pgTable(
  "webhook_attempts",
  {
    orgId: tenantOrg(),
    deliveryId: uuid("delivery_id").notNull(),
    number: integer("number").notNull(),
    startedAt: timestamp("started_at", { withTimezone: true, precision: 3 }).notNull(),
    durationMs: integer("duration_ms").notNull(),
    statusCode: integer("status_code"),
    error: text("error"),
    nextRetryAt: timestamp("next_retry_at", { withTimezone: true, precision: 3 }),
  },
  (t) => [
    foreignKey({
      columns: [t.orgId, t.deliveryId],
      foreignColumns: [webhookDeliveries.orgId, webhookDeliveries.id],
    }),
    primaryKey({ columns: [t.deliveryId, t.number] }),
  ],
);
