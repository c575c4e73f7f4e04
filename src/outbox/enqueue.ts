import { sql } from "drizzle-orm";
import { type Database, database } from "../db/client";
import type { Env } from "../env";
import { logError } from "../lib/log";

/** A queue message names one delivery; everything else is read when it is attempted. */
export type DeliveryMessage = {
  delivery_id: string;
  org_id: string;
};

/**
 * How long a message is trusted to be in flight past its delivery's due time. Past it, the
 * Cron sweep assumes the message was lost and enqueues the delivery again (an attempt is
 * claimed in the database, so a late original and its replacement never both attempt it).
 */
export const LEASE_SECONDS = 600;

/** Deliveries the Cron sweep enqueues per run; the rest wait a minute. */
const DUE_PER_SWEEP = 1_000;

/**
 * The deliveries this transaction's events fanned out to: the fan-out trigger stamps them with
 * the transaction's time. Appended by `Tenant.batch` (option `webhooks`) to the batch that
 * writes, it costs no round trip, takes no lock, and the batch enqueues what it answers after
 * the response (the fan-out leased them for a minute; past that the Cron sweep sends them).
 */
export function deliveriesMadeHere(db: Database) {
  return db.execute<DeliveryMessage>(sql`
    select id as delivery_id, org_id from webhook_deliveries
    where org_id = nullif(current_setting('app.org_id', true), '')::uuid
      and created_at = now()::timestamptz(3)`);
}

/** Sends one message per delivery. A failure is logged: the sweep enqueues them after the lease. */
export async function send(env: Env, messages: DeliveryMessage[]): Promise<void> {
  if (messages.length === 0) return;
  const queue = env.WEBHOOK_QUEUE;
  if (!queue) {
    logError("webhook queue not bound", { deliveries: messages.length });
    return;
  }
  // sendBatch takes at most 100 messages per call.
  for (let i = 0; i < messages.length; i += 100) {
    await queue.sendBatch(messages.slice(i, i + 100).map((body) => ({ body })));
  }
}

/**
 * The Cron sweep: every due delivery of every org with no message in flight (never enqueued,
 * or its message lost) is leased and enqueued again, so a lost message never loses an event.
 */
export async function enqueueDueDeliveries(env: Env): Promise<number> {
  const db = database(env);
  const { rows } = await db.execute<{ id: string; org_id: string }>(
    sql`select id, org_id from webhook_deliveries_due(${DUE_PER_SWEEP}, ${LEASE_SECONDS})`,
  );
  await send(
    env,
    rows.map((r) => ({ delivery_id: r.id, org_id: r.org_id })),
  );
  return rows.length;
}
