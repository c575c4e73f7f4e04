import { and, eq, sql } from "drizzle-orm";
import { logIdFor } from "#audit/checkpoint";
import { orgBatchOf } from "../auth/tenant";
import { webhookAttempts, webhookDeliveries } from "../db/schema";
import type { Env } from "../env";
import { logError } from "../lib/log";
import { OutboundError, outboundPolicy, postBytes } from "../net/outbound";
import { type DeliveryMessage, LEASE_SECONDS } from "../outbox/enqueue";
import { type Signer, signer } from "../signing/signer";
import { openEndpointSecret, standardSignature } from "./endpoint-secret";
import { delayAfter, maxAttempts, retryDelays } from "./schedule";

/** A receiver has this long to answer; a slow one is a failed attempt, retried later. */
export const DELIVERY_TIMEOUT_MS = 10_000;
/** The protected header's `typ`: a webhook signature is never mistaken for another payload. */
export const WEBHOOK_TYP = "webhook+jws";
/** A claimed attempt that never recorded its end (a crashed consumer) is free again after this. */
const ATTEMPT_LOCK_SECONDS = 60;
/** A message this early for its delivery waits again; an earlier one is a duplicate. */
const EARLY_TOLERANCE_SECONDS = 60;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

interface Claimed {
  id: string;
  endpoint_id: string;
  attempts: number;
  url: string;
  token: string | null;
  /** Sealed; `previous_secret` only while its overlap lasts. */
  secret: string | null;
  previous_secret: string | null;
  type: string;
  data: Record<string, unknown>;
  created: string | number;
  livemode: boolean;
}

/**
 * What an attempt came to. Every non-2xx answer is a failure to retry, `410 Gone` included: the
 * spec retries a non-2xx answer, so the Standard Webhooks suggestion to disable an endpoint on
 * 410 is not followed (docs/webhooks.md).
 */
type Outcome =
  | { kind: "succeeded"; statusCode: number }
  | { kind: "failed"; statusCode: number | null; error: string };

/** The Queue consumer: each message is one attempt at one delivery, all in parallel. */
export async function deliverBatch(batch: MessageBatch<unknown>, env: Env): Promise<void> {
  await Promise.all(batch.messages.map((message) => deliverMessage(message, env)));
}

async function deliverMessage(message: Message<unknown>, env: Env): Promise<void> {
  const body = message.body as Partial<DeliveryMessage> | null;
  if (!isDeliveryMessage(body)) {
    // Nothing can ever make a malformed message deliverable: drop it, loudly.
    logError("webhook message malformed", { id: message.id });
    message.ack();
    return;
  }
  try {
    const retryIn = await attempt(env, body);
    if (retryIn === null) message.ack();
    else message.retry({ delaySeconds: retryIn });
  } catch (error) {
    // The consumer itself failed (database or key unavailable): back off and try again; past
    // the queue's max_retries the message goes to the dead-letter queue.
    logError("webhook attempt faulted", { delivery: body.delivery_id, error: String(error) });
    message.retry({ delaySeconds: Math.min(300, 5 * 2 ** message.attempts) });
  }
}

function isDeliveryMessage(body: Partial<DeliveryMessage> | null): body is DeliveryMessage {
  return (
    typeof body?.delivery_id === "string" &&
    typeof body.org_id === "string" &&
    UUID.test(body.delivery_id) &&
    UUID.test(body.org_id)
  );
}

/**
 * One attempt: claim it in the database (so a duplicate message cannot attempt it at the same
 * time or after it succeeded), POST the signed body, record what happened. Answers the delay
 * before the next attempt, or null when there is none to make from this message.
 */
async function attempt(env: Env, message: DeliveryMessage): Promise<number | null> {
  const key = await signer(env);
  const claimed = await claim(env, message);
  if (claimed === null || "earlyBy" in claimed) return claimed?.earlyBy ?? null;
  const delivery = claimed;
  const body = new TextEncoder().encode(
    JSON.stringify({
      id: delivery.id,
      type: delivery.type,
      created: Number(delivery.created),
      livemode: delivery.livemode,
      data: delivery.data,
    }),
  );
  const headers = await signedHeaders(env, key, message.org_id, delivery, body);
  const started = new Date();
  const outcome = await post(env, delivery.url, body, headers);
  const durationMs = Date.now() - started.getTime();
  const delays = retryDelays(env);
  const retryIn =
    outcome.kind === "failed" && delivery.attempts < maxAttempts(delays)
      ? delayAfter(delivery.attempts, delays)
      : null;
  await recordAttempt(env, message.org_id, delivery, outcome, started, durationMs, retryIn);
  return retryIn;
}

/**
 * The headers of one attempt, signed twice over the same bytes: the service's detached JWS
 * (`x-service-signature`, its header naming the endpoint and the org's public log id) and the
 * endpoint's Standard Webhooks signature (`webhook-*`: the id, this attempt's time, one `v1,`
 * entry per live secret). Both carry the same signing time.
 */
async function signedHeaders(
  env: Env,
  key: Signer,
  orgId: string,
  delivery: Claimed,
  body: Uint8Array,
): Promise<Record<string, string>> {
  const timestamp = Math.floor(Date.now() / 1000);
  const binding = { orgId, endpointId: delivery.endpoint_id };
  const secrets: string[] = [];
  if (delivery.secret !== null)
    secrets.push(await openEndpointSecret(env, binding, delivery.secret));
  if (delivery.previous_secret !== null) {
    // A previous secret that no longer opens (sealed under a master key since replaced) only
    // loses its overlap; the current one must open, or the attempt faults and is retried.
    try {
      secrets.push(await openEndpointSecret(env, binding, delivery.previous_secret));
    } catch {
      logError("webhook previous secret unusable", { endpoint: delivery.endpoint_id });
    }
  }
  const headers: Record<string, string> = {
    "content-type": "application/json",
    "user-agent": "agent-risk-webhooks/1",
    "webhook-id": delivery.id,
    "webhook-timestamp": String(timestamp),
    "x-service-signature": await key.signDetached(body, WEBHOOK_TYP, {
      iat: timestamp,
      endpoint_id: delivery.endpoint_id,
      log_id: logIdFor(orgId),
    }),
    "x-service-key-id": key.kid,
    "x-service-attempt": String(delivery.attempts),
  };
  if (secrets.length > 0) {
    headers["webhook-signature"] = await standardSignature(secrets, delivery.id, timestamp, body);
  }
  if (delivery.token !== null) headers["x-service-token"] = delivery.token;
  return headers;
}

/**
 * The claim; or how long this message should wait and come back: a little early for its
 * delivery (Queue delays are approximate), or the delivery is being attempted by another
 * message (which may yet fail); or null: nothing to do (done, cancelled, or due much later,
 * which makes this message a duplicate of the one that will attempt it then). A delivery whose
 * endpoint was disabled or deleted after it was made is cancelled here, never sent.
 */
async function claim(
  env: Env,
  message: DeliveryMessage,
): Promise<Claimed | { earlyBy: number } | null> {
  const id = message.delivery_id;
  const [, claimed, wait] = await orgBatchOf(env, message.org_id, (db) => [
    db.execute(sql`
      update webhook_deliveries d
      set status = 'cancelled', next_attempt_at = null, lease_until = null,
        attempt_started_at = null, completed_at = now()
      from webhook_endpoints ep
      where d.id = ${id} and ep.org_id = d.org_id and ep.id = d.endpoint_id
        and d.status = 'pending' and (ep.status <> 'enabled' or ep.deleted_at is not null)`),
    db.execute<Record<string, unknown>>(sql`
      with c as (
        update webhook_deliveries d
        set attempts = d.attempts + 1, attempt_started_at = now()
        where d.id = ${id} and d.status = 'pending'
          and d.next_attempt_at <= now() + interval '2 seconds'
          and (d.attempt_started_at is null
            or d.attempt_started_at < now() - make_interval(secs => ${ATTEMPT_LOCK_SECONDS}))
        returning d.id, d.endpoint_id, d.attempts, d.event_id
      )
      select c.id, c.endpoint_id, c.attempts, ep.url, ep.token, ep.secret,
        case when ep.previous_secret_expires_at > now() then ep.previous_secret end
          as previous_secret,
        e.type, e.data, e.livemode,
        floor(extract(epoch from e.created_at))::bigint as created
      from c
      join webhook_endpoints ep on ep.id = c.endpoint_id
      join events e on e.id = c.event_id`),
    // After the claim in the same transaction: a row claimed just now reads as locked, but
    // then the claim is what counts.
    db.execute<{ wait: number | null }>(sql`
      select case
        when attempt_started_at >= now() - make_interval(secs => ${ATTEMPT_LOCK_SECONDS})
          then ceil(extract(epoch from attempt_started_at
            + make_interval(secs => ${ATTEMPT_LOCK_SECONDS}) - now()))
        when next_attempt_at > now() + interval '2 seconds'
          and next_attempt_at <= now() + make_interval(secs => ${EARLY_TOLERANCE_SECONDS})
          then ceil(extract(epoch from next_attempt_at - now()))
        end::int as wait
      from webhook_deliveries where id = ${id} and status = 'pending'`),
  ]);
  const row = claimed.rows[0] as unknown as Claimed | undefined;
  if (row) return row;
  const waitSeconds = wait.rows[0]?.wait;
  return waitSeconds === null || waitSeconds === undefined
    ? null
    : { earlyBy: Math.max(1, Number(waitSeconds)) };
}

async function post(
  env: Env,
  url: string,
  body: Uint8Array,
  headers: Record<string, string>,
): Promise<Outcome> {
  try {
    const statusCode = await postBytes(
      url,
      outboundPolicy(env),
      body,
      headers,
      DELIVERY_TIMEOUT_MS,
    );
    if (statusCode >= 200 && statusCode < 300) return { kind: "succeeded", statusCode };
    return { kind: "failed", statusCode, error: `status ${statusCode}` };
  } catch (error) {
    const text = error instanceof OutboundError ? `${error.code}: ${error.message}` : String(error);
    return { kind: "failed", statusCode: null, error: text.slice(0, 500) };
  }
}

/** One transaction: the attempt as it happened and the delivery's next state. */
async function recordAttempt(
  env: Env,
  orgId: string,
  delivery: Claimed,
  outcome: Outcome,
  started: Date,
  durationMs: number,
  retryIn: number | null,
): Promise<void> {
  // The database's clock, the one the claim compares with.
  const nextAt = retryIn === null ? null : sql`now() + make_interval(secs => ${retryIn})`;
  const status = outcome.kind === "succeeded" ? "succeeded" : nextAt ? "pending" : "failed";
  const error = outcome.kind === "failed" ? outcome.error : null;
  await orgBatchOf(env, orgId, (db) => [
    db
      .insert(webhookAttempts)
      .values({
        deliveryId: delivery.id,
        number: delivery.attempts,
        startedAt: started,
        durationMs,
        statusCode: outcome.statusCode,
        error,
        nextRetryAt: nextAt,
      })
      .onConflictDoNothing(),
    // Only the state this attempt claimed: a later attempt's (after this one's lock ran out)
    // is never overwritten by a slow one.
    db
      .update(webhookDeliveries)
      .set({
        status,
        nextAttemptAt: nextAt,
        leaseUntil:
          retryIn === null ? null : sql`now() + make_interval(secs => ${retryIn + LEASE_SECONDS})`,
        attemptStartedAt: null,
        completedAt: nextAt ? null : sql`now()`,
      })
      .where(
        and(
          eq(webhookDeliveries.id, delivery.id),
          eq(webhookDeliveries.status, "pending"),
          eq(webhookDeliveries.attempts, delivery.attempts),
        ),
      ),
  ]);
}

/**
 * The dead-letter queue's consumer: a message that faulted past the queue's retries. The
 * delivery is marked; one whose attempts are used up is `failed`, any other stays pending under
 * a fresh lease, so the Cron sweep tries it again later: nothing is lost.
 */
export async function recordDeadLetters(batch: MessageBatch<unknown>, env: Env): Promise<void> {
  const attemptsAllowed = maxAttempts(retryDelays(env));
  for (const message of batch.messages) {
    const body = message.body as Partial<DeliveryMessage> | null;
    if (!isDeliveryMessage(body)) {
      message.ack();
      continue;
    }
    logError("webhook delivery dead-lettered", { delivery: body.delivery_id });
    try {
      await orgBatchOf(env, body.org_id, (db) => [
        db.execute(sql`
          update webhook_deliveries set status = 'failed', next_attempt_at = null,
            lease_until = null, attempt_started_at = null, completed_at = now(),
            dead_lettered_at = now()
          where id = ${body.delivery_id} and status = 'pending' and attempts >= ${attemptsAllowed}`),
        db.execute(sql`
          update webhook_deliveries set dead_lettered_at = now(),
            lease_until = now() + make_interval(secs => ${LEASE_SECONDS})
          where id = ${body.delivery_id} and status = 'pending'`),
      ]);
      message.ack();
    } catch (error) {
      logError("dead letter not recorded", { error: String(error) });
      message.retry({ delaySeconds: 60 });
    }
  }
}
