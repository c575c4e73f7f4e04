import {
  createExecutionContext,
  createMessageBatch,
  createScheduledController,
  env,
  getQueueResult,
  waitOnExecutionContext,
} from "cloudflare:test";
import {
  calculateJwkThumbprint,
  createLocalJWKSet,
  exportJWK,
  generateKeyPair,
  type JSONWebKeySet,
} from "jose";
import { describe, expect, it } from "vitest";
import { logIdFor } from "#audit/checkpoint";
import { MAX_SIGNATURE_AGE_SECONDS, verifyDelivery } from "../../docs/examples/webhook-verify";
import worker from "../../workers/main";
import { closedDocument, schemaErrors } from "../support/openapi-contract";
import { call, callRaw } from "./support/api";
import {
  agentOf,
  assess,
  assessOk,
  createPolicy,
  type Json,
  jwks,
  orgWithKey,
  payment,
} from "./support/assess";
import { ownerSql } from "./support/db";
import {
  createEndpoint,
  deliveries,
  eventually,
  outboxAlert,
  type ReceiverConfig,
  received,
  receiver,
  reconfigure,
  settled,
} from "./support/webhooks";

// Spec, Events: the delivery body is {id, type, created, data}; headers x-service-signature
// (compact JWS, EdDSA, over the exact raw body), x-service-key-id, x-service-token. Delivery
// is at-least-once with retries; the receiver deduplicates on id. docs/webhooks.md: the
// signature is detached (`header..signature`), retries follow WEBHOOK_RETRY_SCHEDULE, which
// the tests set to "1,1,1": four attempts in all.

const ATTEMPTS = 4;

async function deniedSetup(eventTypes: string[] = ["assessment.denied"]) {
  const { org, key } = await orgWithKey();
  const agent = await agentOf(org);
  await createPolicy(org, { max_amount: 1 });
  return { org, key, agent, eventTypes };
}

/** A receiver, and an endpoint of the key's org subscribed to assessment.denied only. */
async function denialHook(key: string, config: ReceiverConfig = {}) {
  const hook = await receiver(config);
  const endpoint = await createEndpoint(key, { url: hook.url, eventTypes: ["assessment.denied"] });
  return { hook, endpoint };
}

function deny(key: string, agentId: string) {
  return assessOk(key, { mandate: payment(), agent_id: agentId });
}

async function arrivals(name: string, count: number, timeoutMs = 20_000) {
  return eventually(
    async () => {
      const log = await received(name);
      return log.arrivals.length >= count ? log : undefined;
    },
    timeoutMs,
    `${count} arrivals at ${name}`,
  );
}

/** Runs the consumer on one message in a batch that records what it decided (the test
 * pool's own batches do not keep retry delays). */
async function consumeOne(body: unknown) {
  const outcome: { acked: boolean; retryDelay: number | undefined } = {
    acked: false,
    retryDelay: undefined,
  };
  const message = {
    id: "m",
    timestamp: new Date(),
    attempts: 1,
    body,
    ack: () => {
      outcome.acked = true;
    },
    retry: (options?: { delaySeconds?: number }) => {
      outcome.retryDelay = options?.delaySeconds ?? 0;
    },
  };
  const batch = { queue: "webhook-deliveries", messages: [message] } as unknown as MessageBatch;
  const ctx = createExecutionContext();
  await worker.queue(batch, env, ctx);
  await waitOnExecutionContext(ctx);
  return outcome;
}

async function runCron() {
  const ctx = createExecutionContext();
  await worker.scheduled(createScheduledController({ cron: "* * * * *" }), env, ctx);
  await waitOnExecutionContext(ctx);
}

describe("a delivery", () => {
  it("carries {id, type, created, livemode, data}, data exactly as the spec lists for assessment.denied", async () => {
    const { key, agent } = await deniedSetup();
    const { hook, endpoint } = await denialHook(key);
    const before = Math.floor(Date.now() / 1000);
    const body = await deny(key, agent.id);
    const {
      arrivals: [arrival],
    } = await arrivals(hook.name, 1);
    const [delivery] = await settled(key, endpoint.id, 1);

    expect(arrival?.verified).toBe(true);
    expect(Object.keys(arrival?.body ?? {}).sort()).toEqual(
      ["created", "data", "id", "livemode", "type"].sort(),
    );
    expect(arrival?.body).toEqual({
      id: delivery?.id,
      type: "assessment.denied",
      created: expect.any(Number),
      livemode: true,
      data: {
        assessment_id: body.assessmentId,
        decision: "deny",
        risk_level: body.outcome.outcome.risk_level,
        risk_score: body.outcome.outcome.risk_score,
        agent_id: agent.id,
        kind: "ap2_payment",
      },
    });
    expect(Number.isInteger(arrival?.body.created)).toBe(true);
    expect(arrival?.body.created).toBeGreaterThanOrEqual(before - 1);
    expect(arrival?.body.created).toBeLessThanOrEqual(Math.floor(Date.now() / 1000));
    expect(delivery).toMatchObject({
      object: "webhook_delivery",
      endpoint_id: endpoint.id,
      event: { type: "assessment.denied", created: arrival?.body.created },
      status: "succeeded",
      attempt_count: 1,
      next_attempt_at: null,
      dead_lettered_at: null,
    });
    expect(delivery?.attempts).toEqual([
      {
        number: 1,
        time: expect.any(String),
        status_code: 200,
        duration_ms: expect.any(Number),
        error: null,
        next_retry_at: null,
      },
    ]);
    expect(delivery?.completed_at).toEqual(expect.any(String));
  });

  it("is signed by the key x-service-key-id names in the published key set, over the exact raw body", async () => {
    const { key, agent } = await deniedSetup();
    const { hook } = await denialHook(key);
    await deny(key, agent.id);
    const {
      arrivals: [arrival],
    } = await arrivals(hook.name, 1);
    // The receiver checked with node:crypto: a detached JWS (`header..signature`) completed with
    // the raw body, alg EdDSA, typ webhook+jws, its kid equal to x-service-key-id and found in
    // the key set it was given from /.well-known/jwks.json. The key is the current one.
    expect(arrival?.verified).toBe(true);
    const [current] = await jwks();
    expect(arrival?.key_id).toBe(current?.kid);
  });

  it("a receiver that cannot verify the signature (another key set) refuses it, and it is retried", async () => {
    const { key, agent } = await deniedSetup();
    const hook = await receiver();
    // The receiver now trusts a key set without the service's key: nothing verifies.
    await fetch(`${env.TEST_FIXTURE_URL}/hooks/${hook.name}/config`, {
      method: "PUT",
      body: JSON.stringify({
        mode: "ok",
        jwks: { keys: [{ kty: "OKP", crv: "Ed25519", kid: "other", x: "A".repeat(43) }] },
      }),
    });
    const endpoint = await createEndpoint(key, {
      url: hook.url,
      eventTypes: ["assessment.denied"],
    });
    await deny(key, agent.id);
    const [delivery] = await settled(key, endpoint.id, 1);
    const log = await received(hook.name);
    expect(log.arrivals).toHaveLength(ATTEMPTS);
    expect(log.arrivals.every((a) => !a.verified && a.answered === 400)).toBe(true);
    expect(log.processed).toEqual([]);
    expect(delivery?.status).toBe("failed");
  });

  it("sends the endpoint's token as x-service-token, and no token header when none was set", async () => {
    const { key, agent } = await deniedSetup();
    const token = `tok_${crypto.randomUUID()}`;
    const withToken = await receiver({ token });
    const without = await receiver();
    await createEndpoint(key, { url: withToken.url, eventTypes: ["assessment.denied"], token });
    await createEndpoint(key, { url: without.url, eventTypes: ["assessment.denied"] });
    await deny(key, agent.id);
    const [a] = (await arrivals(withToken.name, 1)).arrivals;
    const [b] = (await arrivals(without.name, 1)).arrivals;
    expect(a?.token).toBe(token);
    expect(a?.answered).toBe(200);
    expect(b?.token).toBeNull();
  });
});

describe("event types", () => {
  it("an endpoint gets only the types it subscribed to; an empty list gets every type", async () => {
    const { key, agent } = await deniedSetup();
    const deniedOnly = await receiver();
    const everything = await receiver();
    const flaggedOnly = await receiver();
    const a = await createEndpoint(key, { url: deniedOnly.url, eventTypes: ["assessment.denied"] });
    const b = await createEndpoint(key, { url: everything.url, eventTypes: [] });
    const c = await createEndpoint(key, {
      url: flaggedOnly.url,
      event_types: ["assessment.flagged"],
    });
    await deny(key, agent.id);
    // A deny is assessment.completed and assessment.denied.
    await settled(key, a.id, 1);
    await settled(key, b.id, 2);
    expect((await received(deniedOnly.name)).arrivals.map((x) => x.type)).toEqual([
      "assessment.denied",
    ]);
    expect((await received(everything.name)).arrivals.map((x) => x.type).sort()).toEqual([
      "assessment.completed",
      "assessment.denied",
    ]);
    expect(await deliveries(key, c.id)).toEqual([]);
    expect((await received(flaggedOnly.name)).arrivals).toEqual([]);
  });

  it("an agent suspended by PATCH is delivered as agent.suspended", async () => {
    const { org, key } = await orgWithKey();
    const agent = await agentOf(org);
    const hook = await receiver();
    const endpoint = await createEndpoint(key, { url: hook.url, eventTypes: ["agent.suspended"] });
    const res = await call(`/v1/agents/${agent.id}`, {
      method: "PATCH",
      key,
      body: { status: "suspended" },
    });
    expect(res.status).toBe(200);
    const [delivery] = await settled(key, endpoint.id, 1);
    expect(delivery?.status).toBe("succeeded");
    const [arrival] = (await received(hook.name)).arrivals;
    expect(arrival?.body).toMatchObject({
      type: "agent.suspended",
      data: { agent_id: agent.id, status: "suspended" },
    });
  });

  it("test-mode events go to test endpoints only, live events to live endpoints only", async () => {
    const { org, key: liveKey } = await orgWithKey();
    const { key: testKey } = await org.key(undefined, "test");
    const agent = await agentOf(org);
    await createPolicy(org, { max_amount: 1 });
    const live = await receiver();
    const test = await receiver();
    const liveEndpoint = await createEndpoint(liveKey, {
      url: live.url,
      eventTypes: ["assessment.denied"],
    });
    const testEndpoint = await createEndpoint(testKey, {
      url: test.url,
      eventTypes: ["assessment.denied"],
    });
    expect(liveEndpoint.livemode).toBe(true);
    expect(testEndpoint.livemode).toBe(false);
    const testBody = await assessOk(testKey, { mandate: payment(), agent_id: agent.id });
    expect(testBody.outcome.outcome.decision).toBe("deny");
    const [t] = (await arrivals(test.name, 1)).arrivals;
    expect(t?.body).toMatchObject({
      livemode: false,
      data: { assessment_id: testBody.assessmentId },
    });
    await deny(liveKey, agent.id);
    const [l] = (await arrivals(live.name, 1)).arrivals;
    expect(l?.body.livemode).toBe(true);
    expect((await received(test.name)).arrivals).toHaveLength(1);
    expect((await received(live.name)).arrivals).toHaveLength(1);
  });
});

describe("retries", () => {
  it("a receiver failing its first two attempts gets the same id three times and processes it once", async () => {
    const { key, agent } = await deniedSetup();
    const { hook, endpoint } = await denialHook(key, { fail_first: 2, status: 503 });
    await deny(key, agent.id);
    const [delivery] = await settled(key, endpoint.id, 1);
    const log = await received(hook.name);
    expect(log.arrivals).toHaveLength(3);
    expect(new Set(log.arrivals.map((a) => a.id))).toEqual(new Set([delivery?.id]));
    expect(log.arrivals.map((a) => a.answered)).toEqual([503, 503, 200]);
    expect(log.arrivals.map((a) => a.attempt)).toEqual(["1", "2", "3"]);
    expect(log.arrivals.every((a) => a.verified)).toBe(true);
    // The body is the same bytes every time: only the signature's iat may differ.
    expect(new Set(log.arrivals.map((a) => JSON.stringify(a.body))).size).toBe(1);
    expect(log.processed).toEqual([delivery?.id]);
    expect(delivery?.status).toBe("succeeded");
    expect(delivery?.attempts.map((a: Json) => [a.number, a.status_code, a.error])).toEqual([
      [1, 503, "status 503"],
      [2, 503, "status 503"],
      [3, 200, null],
    ]);
    // Each failed attempt names when the next one was due; the last names none.
    const [first, second, third] = (delivery?.attempts ?? []) as Json[];
    expect(Date.parse(first?.next_retry_at)).toBeGreaterThan(Date.parse(first?.time));
    expect(Date.parse(second?.time)).toBeGreaterThanOrEqual(
      Date.parse(first?.next_retry_at) - 2000,
    );
    expect(third?.next_retry_at).toBeNull();
  });

  it("a receiver that processed a delivery but whose answer was lost gets it again and processes it once", async () => {
    const { key, agent } = await deniedSetup();
    const { hook, endpoint } = await denialHook(key, { lose_answer_first: 1, status: 500 });
    await deny(key, agent.id);
    const [delivery] = await settled(key, endpoint.id, 1);
    const log = await received(hook.name);
    expect(log.arrivals.map((a) => [a.id, a.duplicate, a.answered])).toEqual([
      [delivery?.id, false, 500],
      [delivery?.id, true, 200],
    ]);
    expect(log.processed).toEqual([delivery?.id]);
    expect(delivery).toMatchObject({ status: "succeeded", attempt_count: 2 });
  });

  it("a receiver down for the whole schedule: the delivery ends failed, every attempt on record, nothing lost", async () => {
    const { org, key, agent } = await deniedSetup();
    const { hook, endpoint } = await denialHook(key, { mode: "fail", status: 500 });
    const body = await deny(key, agent.id);
    const [delivery] = await settled(key, endpoint.id, 1);
    expect(delivery).toMatchObject({
      status: "failed",
      attempt_count: ATTEMPTS,
      next_attempt_at: null,
    });
    expect(delivery?.attempts.map((a: Json) => a.number)).toEqual([1, 2, 3, 4]);
    expect(delivery?.attempts.every((a: Json) => a.status_code === 500)).toBe(true);
    expect(delivery?.attempts.slice(0, 3).every((a: Json) => a.next_retry_at !== null)).toBe(true);
    expect(delivery?.attempts[3]?.next_retry_at).toBeNull();
    expect((await received(hook.name)).arrivals).toHaveLength(ATTEMPTS);
    // Kept: the event and the delivery stay, and a dispatch after the receiver recovers does
    // not resurrect a failed delivery (it is on record, not pending).
    const [event] = await ownerSql`select id, type from events
      where org_id = ${org.id} and type = 'assessment.denied' and data->>'assessment_id' = ${body.assessmentId}`;
    expect(event?.type).toBe("assessment.denied");
    const [row] =
      await ownerSql`select status, attempts from webhook_deliveries where id = ${delivery?.id}`;
    expect(row).toEqual({ status: "failed", attempts: ATTEMPTS });
  });

  it("a network failure (nothing listening) is retried like a failed status", async () => {
    const { key, agent } = await deniedSetup();
    // A loopback port nobody listens on: the connection is refused.
    const endpoint = await createEndpoint(key, {
      url: "http://127.0.0.1:9/hooks/nobody",
      eventTypes: ["assessment.denied"],
    });
    await deny(key, agent.id);
    const [delivery] = await settled(key, endpoint.id, 1);
    expect(delivery?.status).toBe("failed");
    expect(delivery?.attempts).toHaveLength(ATTEMPTS);
    for (const a of (delivery?.attempts ?? []) as Json[]) {
      expect(a.status_code).toBeNull();
      expect(a.error).toMatch(/^unreachable: /);
    }
  });

  it("410 Gone is retried like any other failure: the endpoint stays enabled and keeps receiving", async () => {
    const { key, agent } = await deniedSetup();
    // Gone for its first two attempts, then back (Standard Webhooks would have disabled it).
    const { hook, endpoint } = await denialHook(key, { fail_first: 2, status: 410 });
    await deny(key, agent.id);
    const [delivery] = await settled(key, endpoint.id, 1);
    expect(delivery).toMatchObject({ status: "succeeded", attempt_count: 3 });
    expect(delivery?.attempts.map((a: Json) => [a.number, a.status_code, a.error])).toEqual([
      [1, 410, "status 410"],
      [2, 410, "status 410"],
      [3, 200, null],
    ]);
    expect(delivery?.attempts[0]?.next_retry_at).toEqual(expect.any(String));
    const list = await call("/v1/webhook-endpoints", { key });
    expect(list.json.data.find((e: Json) => e.id === endpoint.id)).toMatchObject({
      status: "enabled",
      disabled_reason: null,
      disabled_at: null,
    });
    // New events still fan out to it and arrive.
    await deny(key, agent.id);
    const all = await settled(key, endpoint.id, 2);
    expect(all.map((d) => d.status)).toEqual(["succeeded", "succeeded"]);
    expect((await received(hook.name)).processed).toHaveLength(2);
  });

  it("a receiver answering 410 for the whole schedule uses up every attempt, as a 500 would", async () => {
    const { key, agent } = await deniedSetup();
    const { hook, endpoint } = await denialHook(key, { mode: "gone" });
    await deny(key, agent.id);
    const [delivery] = await settled(key, endpoint.id, 1);
    expect(delivery).toMatchObject({ status: "failed", attempt_count: ATTEMPTS });
    expect(delivery?.attempts.every((a: Json) => a.status_code === 410)).toBe(true);
    expect((await received(hook.name)).arrivals).toHaveLength(ATTEMPTS);
  });
});

describe("off the hot path", () => {
  it("an assessment while the receiver hangs answers at its normal speed; the attempt times out at 10 s", async () => {
    const { key, agent } = await deniedSetup();
    // Baseline first, with no endpoint.
    const baselineStart = Date.now();
    await deny(key, agent.id);
    const baseline = Date.now() - baselineStart;
    const { hook, endpoint } = await denialHook(key, { mode: "hang" });
    const start = Date.now();
    const res = await assess(key, { mandate: payment(), agent_id: agent.id });
    const elapsed = Date.now() - start;
    expect(res.status).toBe(200);
    expect(res.json.outcome.outcome.decision).toBe("deny");
    // Far below the receiver's 10 s timeout: the verdict never waited for it.
    expect(elapsed).toBeLessThan(Math.max(3 * baseline, 2000));
    await arrivals(hook.name, 1);
    // Let the next attempt succeed, so the hang costs one timeout only.
    await reconfigure(hook.name, { mode: "ok" });
    const [delivery] = await settled(key, endpoint.id, 1, 40_000);
    expect(delivery?.status).toBe("succeeded");
    expect(delivery?.attempts[0]).toMatchObject({ number: 1, status_code: null });
    expect(delivery?.attempts[0]?.error).toMatch(/^timeout: /);
    expect(delivery?.attempts[0]?.duration_ms).toBeGreaterThanOrEqual(9_900);
  }, 60_000);
});

describe("the queue and the sweep", () => {
  it("two messages for one delivery make one attempt", async () => {
    const { org, key, agent } = await deniedSetup();
    const { hook, endpoint } = await denialHook(key);
    await deny(key, agent.id);
    const [delivery] = await settled(key, endpoint.id, 1);
    expect((await received(hook.name)).arrivals).toHaveLength(1);
    // Due again (as after a failed attempt), and two messages race for it: a lost-and-found
    // original and the sweep's replacement, say.
    await ownerSql`update webhook_deliveries set status = 'pending', next_attempt_at = now(),
      completed_at = null where id = ${delivery?.id}`;
    const message = { delivery_id: delivery!.id, org_id: org.id };
    await env.WEBHOOK_QUEUE?.sendBatch([{ body: message }, { body: message }]);
    const [again] = await settled(key, endpoint.id, 1);
    await new Promise((r) => setTimeout(r, 1500));
    expect((await received(hook.name)).arrivals).toHaveLength(2);
    expect(again?.status).toBe("succeeded");
    expect((await deliveries(key, endpoint.id))[0]?.attempt_count).toBe(2);
  });

  it("a delivery whose message was lost is enqueued again by the Cron sweep", async () => {
    const { org, key } = await orgWithKey();
    const hook = await receiver();
    const endpoint = await createEndpoint(key, {
      url: hook.url,
      eventTypes: ["audit.integrity_alert"],
    });
    // An event written with no message sent (as if the message were lost): the outbox
    // fan-out makes the delivery; only the sweep can find it.
    const eventId = crypto.randomUUID();
    await outboxAlert(org.id, { reason: "test" }, eventId);
    const [pending] = await deliveries(key, endpoint.id);
    expect(pending).toMatchObject({ status: "pending", attempt_count: 0, event: { id: eventId } });
    // Within the writer's minute the sweep leaves it to the writer.
    await runCron();
    await new Promise((r) => setTimeout(r, 1500));
    expect((await received(hook.name)).arrivals).toHaveLength(0);
    // Past it, the sweep sends it.
    await ownerSql`update webhook_deliveries set lease_until = now() - interval '1 second'
      where event_id = ${eventId}`;
    await runCron();
    const [delivered] = await settled(key, endpoint.id, 1);
    expect(delivered?.status).toBe("succeeded");
    const [arrival] = (await received(hook.name)).arrivals;
    expect(arrival?.body).toMatchObject({
      id: pending?.id,
      type: "audit.integrity_alert",
      data: { reason: "test" },
    });
    // A lease that ran out (the message vanished in flight) is swept the same way.
    const lostId = crypto.randomUUID();
    await outboxAlert(org.id, { reason: "lost" }, lostId);
    await ownerSql`update webhook_deliveries set lease_until = now() - interval '1 second'
      where event_id = ${lostId}`;
    await runCron();
    await settled(key, endpoint.id, 2);
    expect((await received(hook.name)).arrivals.map((a) => a.body.data.reason)).toEqual([
      "test",
      "lost",
    ]);
  });

  it("the dead-letter consumer marks what fell through: failed when out of attempts, else pending for the sweep", async () => {
    const { org, key } = await orgWithKey();
    const hook = await receiver({ mode: "fail" });
    const endpoint = await createEndpoint(key, {
      url: hook.url,
      eventTypes: ["audit.integrity_alert"],
    });
    const spent = crypto.randomUUID();
    const fresh = crypto.randomUUID();
    await ownerSql`insert into events (id, org_id, type, data) values
      (${spent}, ${org.id}, 'audit.integrity_alert', '{}'),
      (${fresh}, ${org.id}, 'audit.integrity_alert', '{}')`;
    // Leased, so no sweep sends them meanwhile; one has used every attempt.
    await ownerSql`update webhook_deliveries set lease_until = now() + interval '1 hour',
      attempts = case when event_id = ${spent} then ${ATTEMPTS} else 1 end
      where endpoint_id = ${endpoint.id}`;
    const rows =
      await ownerSql`select id, event_id from webhook_deliveries where endpoint_id = ${endpoint.id}`;
    const idOf = (eventId: string) => rows.find((r) => r.event_id === eventId)?.id as string;
    const batch = createMessageBatch("webhook-deliveries-dlq", [
      {
        id: "m1",
        timestamp: new Date(),
        attempts: 11,
        body: { delivery_id: idOf(spent), org_id: org.id },
      },
      {
        id: "m2",
        timestamp: new Date(),
        attempts: 11,
        body: { delivery_id: idOf(fresh), org_id: org.id },
      },
    ]);
    const ctx = createExecutionContext();
    await worker.queue(batch, env, ctx);
    const result = await getQueueResult(batch, ctx);
    expect(result.explicitAcks.sort()).toEqual(["m1", "m2"]);
    const byId = new Map(
      (await deliveries(key, endpoint.id)).map((d) => [d.event.id as string, d]),
    );
    expect(byId.get(spent)).toMatchObject({ status: "failed", next_attempt_at: null });
    expect(byId.get(spent)?.dead_lettered_at).toEqual(expect.any(String));
    expect(byId.get(fresh)).toMatchObject({ status: "pending" });
    expect(byId.get(fresh)?.dead_lettered_at).toEqual(expect.any(String));
    const [lease] = await ownerSql`select lease_until > now() as leased from webhook_deliveries
      where id = ${idOf(fresh)}`;
    expect(lease?.leased).toBe(true);
  });

  it("a message a little early for its delivery waits again; one far early is a duplicate and dropped", async () => {
    const { org, key } = await orgWithKey();
    const hook = await receiver();
    const endpoint = await createEndpoint(key, {
      url: hook.url,
      eventTypes: ["audit.integrity_alert"],
    });
    await outboxAlert(org.id);
    const [row] = await ownerSql`update webhook_deliveries
      set next_attempt_at = now() + interval '30 seconds', lease_until = now() + interval '1 hour'
      where endpoint_id = ${endpoint.id} returning id`;
    const consume = () => consumeOne({ delivery_id: row?.id, org_id: org.id });
    const early = await consume();
    expect(early.acked).toBe(false);
    expect(early.retryDelay).toBeGreaterThanOrEqual(28);
    expect(early.retryDelay).toBeLessThanOrEqual(31);
    await ownerSql`update webhook_deliveries set next_attempt_at = now() + interval '1 hour'
      where id = ${row?.id}`;
    const duplicate = await consume();
    expect(duplicate).toEqual({ acked: true, retryDelay: undefined });
    expect((await received(hook.name)).arrivals).toEqual([]);
    expect((await deliveries(key, endpoint.id))[0]?.attempt_count).toBe(0);
  });

  it("a message for a delivery being attempted waits out the attempt's lock instead of being dropped", async () => {
    const { org, key } = await orgWithKey();
    const endpoint = await createEndpoint(key, {
      url: (await receiver()).url,
      eventTypes: ["audit.integrity_alert"],
    });
    await outboxAlert(org.id);
    // Claimed by a consumer that faulted before recording its end.
    const [row] = await ownerSql`update webhook_deliveries
      set attempts = 1, attempt_started_at = now() - interval '10 seconds',
        lease_until = now() + interval '1 hour'
      where endpoint_id = ${endpoint.id} returning id`;
    const outcome = await consumeOne({ delivery_id: row?.id, org_id: org.id });
    expect(outcome.acked).toBe(false);
    expect(outcome.retryDelay).toBeGreaterThanOrEqual(49);
    expect(outcome.retryDelay).toBeLessThanOrEqual(51);
    expect((await deliveries(key, endpoint.id))[0]?.attempt_count).toBe(1);
  });

  it("a delivery whose endpoint went away after the fan-out is cancelled, never sent", async () => {
    const { org, key } = await orgWithKey();
    const hook = await receiver();
    const endpoint = await createEndpoint(key, {
      url: hook.url,
      eventTypes: ["audit.integrity_alert"],
    });
    await outboxAlert(org.id);
    const [row] =
      await ownerSql`update webhook_deliveries set lease_until = now() + interval '1 hour'
      where endpoint_id = ${endpoint.id} returning id`;
    // The deletion committed without seeing the delivery (a fan-out racing it).
    await ownerSql`update webhook_endpoints set deleted_at = now() where id = ${endpoint.id}`;
    const outcome = await consumeOne({ delivery_id: row?.id, org_id: org.id });
    expect(outcome).toEqual({ acked: true, retryDelay: undefined });
    const [after] = await ownerSql`select status, next_attempt_at from webhook_deliveries
      where id = ${row?.id}`;
    expect(after).toEqual({ status: "cancelled", next_attempt_at: null });
    expect((await received(hook.name)).arrivals).toEqual([]);
    // The sweep cancels such deliveries too, instead of sending them.
    await outboxAlert(org.id);
    await ownerSql`update webhook_endpoints set deleted_at = null where id = ${endpoint.id}`;
    await outboxAlert(org.id);
    await ownerSql`update webhook_endpoints set deleted_at = now() where id = ${endpoint.id}`;
    await ownerSql`update webhook_deliveries set lease_until = null
      where endpoint_id = ${endpoint.id} and status = 'pending'`;
    await runCron();
    const rows = await ownerSql`select status from webhook_deliveries
      where endpoint_id = ${endpoint.id}`;
    expect(rows.map((r) => r.status)).toEqual(["cancelled", "cancelled"]);
    await new Promise((r) => setTimeout(r, 1200));
    expect((await received(hook.name)).arrivals).toEqual([]);
  });

  it("a malformed message is acknowledged and dropped, not retried forever", async () => {
    const batch = createMessageBatch("webhook-deliveries", [
      { id: "bad", timestamp: new Date(), attempts: 1, body: { delivery_id: "x' or 1=1" } },
    ]);
    const ctx = createExecutionContext();
    await worker.queue(batch, env, ctx);
    const result = await getQueueResult(batch, ctx);
    expect(result.explicitAcks).toEqual(["bad"]);
    expect(result.retryMessages).toEqual([]);
  });

  it("POST /v1/webhooks/dispatch delivers a delivery waiting for its retry now", async () => {
    const { org, key } = await orgWithKey();
    const hook = await receiver();
    const endpoint = await createEndpoint(key, {
      url: hook.url,
      eventTypes: ["audit.integrity_alert"],
    });
    const eventId = crypto.randomUUID();
    await outboxAlert(org.id, {}, eventId);
    // Scheduled an hour out with its message in flight: nothing happens on its own.
    await ownerSql`update webhook_deliveries set next_attempt_at = now() + interval '1 hour',
      lease_until = now() + interval '2 hours' where endpoint_id = ${endpoint.id}`;
    const res = await call("/v1/webhooks/dispatch", { method: "POST", key });
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ object: "webhook_dispatch", enqueued: 1, has_more: false });
    // Called again at once: the delivery is due with its message in flight; nothing to add.
    const twice = await call("/v1/webhooks/dispatch", { method: "POST", key });
    expect(twice.json).toEqual({ object: "webhook_dispatch", enqueued: 0, has_more: false });
    const [delivered] = await settled(key, endpoint.id, 1);
    expect(delivered?.status).toBe("succeeded");
    // Nothing pending any more: a second dispatch enqueues nothing.
    const again = await call("/v1/webhooks/dispatch", { method: "POST", key });
    expect(again.json).toEqual({ object: "webhook_dispatch", enqueued: 0, has_more: false });
  });

  it("dispatch with a test key touches test-mode deliveries only", async () => {
    const { org, key: liveKey } = await orgWithKey();
    const { key: testKey } = await org.key(undefined, "test");
    const endpoint = await createEndpoint(liveKey, {
      url: (await receiver()).url,
      eventTypes: ["audit.integrity_alert"],
    });
    await outboxAlert(org.id);
    await ownerSql`update webhook_deliveries set next_attempt_at = now() + interval '1 hour',
      lease_until = now() + interval '2 hours' where endpoint_id = ${endpoint.id}`;
    const res = await call("/v1/webhooks/dispatch", { method: "POST", key: testKey });
    expect(res.json.enqueued).toBe(0);
    const [still] = await deliveries(liveKey, endpoint.id);
    expect(still?.status).toBe("pending");
  });
});

describe("key.rotation", () => {
  async function otherKey() {
    const { publicKey } = await generateKeyPair("EdDSA", { extractable: true });
    const jwk = await exportJWK(publicKey);
    return { ...jwk, kid: await calculateJwkThumbprint(jwk, "sha256") };
  }

  it("each change of signing key is announced once to every endpoint that listens, naming both keys", async () => {
    const { key } = await orgWithKey();
    const hook = await receiver();
    const endpoint = await createEndpoint(key, { url: hook.url, eventTypes: ["key.rotation"] });
    const [current] = await jwks();
    // The sweep has noted the deployed key: nothing to announce.
    await runCron();
    await new Promise((r) => setTimeout(r, 1200));
    expect(await deliveries(key, endpoint.id)).toEqual([]);
    // Another key becomes current (as a deploy with a new SIGNING_KEY would make it), then the
    // deployed one again: two rotations, each announced once.
    const other = await otherKey();
    await ownerSql`select note_signing_key(${other.kid}, ${JSON.stringify(other)}::jsonb)`;
    await runCron();
    await runCron();
    const settledDeliveries = await settled(key, endpoint.id, 2);
    expect(settledDeliveries.every((d) => d.status === "succeeded")).toBe(true);
    await new Promise((r) => setTimeout(r, 1200));
    expect(await deliveries(key, endpoint.id)).toHaveLength(2);
    const bodies = (await received(hook.name)).arrivals.map((a) => a.body);
    expect(bodies.map((b) => b.type)).toEqual(["key.rotation", "key.rotation"]);
    // As the OpenAPI document's WebhookEvent says (made in SQL, so checked here on real ones).
    const document = closedDocument((await callRaw("/openapi.json")).json);
    for (const body of bodies) {
      expect(schemaErrors(document, { $ref: "#/components/schemas/WebhookEvent" }, body)).toEqual(
        [],
      );
    }
    expect(bodies.map((b) => [b.data.kid, b.data.previous_kid]).sort()).toEqual(
      [
        [other.kid, current?.kid],
        [current?.kid, other.kid],
      ].sort(),
    );
    const keys = await ownerSql`select kid, retired_at from signing_keys
      where kid in (${other.kid}, ${current?.kid})`;
    expect(keys.find((k) => k.kid === other.kid)?.retired_at).not.toBeNull();
    expect(keys.find((k) => k.kid === current?.kid)?.retired_at).toBeNull();
  });

  it("note_signing_key takes only an Ed25519 public key under its own thumbprint", async () => {
    const other = await otherKey();
    const refused = [
      ["not-the-thumbprint", other],
      [other.kid, { ...other, x: `${other.x?.slice(0, -1)}${other.x?.endsWith("A") ? "B" : "A"}` }],
      [other.kid, { ...other, d: "secret" }],
      [other.kid, { ...other, crv: "X25519" }],
      [other.kid, {}],
    ] as const;
    for (const [kid, jwk] of refused) {
      await expect(
        ownerSql`select note_signing_key(${kid}, ${JSON.stringify(jwk)}::jsonb)`,
      ).rejects.toThrow();
    }
    const [current] = await ownerSql`select kid from signing_keys where retired_at is null`;
    expect(current?.kid).not.toBe(other.kid);
  });
});

describe("the receiver guide (docs/examples/webhook-verify.ts)", () => {
  it("verifies real deliveries against the published key set, and rejects a changed byte, another key, a stale signature, another endpoint", async () => {
    const { org, key, agent } = await deniedSetup();
    const { hook, endpoint } = await denialHook(key);
    await deny(key, agent.id);
    const [arrival] = (await arrivals(hook.name, 1)).arrivals;
    const raw = Uint8Array.from(atob(arrival?.raw ?? ""), (ch) => ch.charCodeAt(0));
    const keySet = createLocalJWKSet({ keys: await jwks() } as JSONWebKeySet);
    const headers = { signature: arrival?.signature, keyId: arrival?.key_id };
    const expected = { endpointId: endpoint.id as string, logId: logIdFor(org.id) };
    const delivery = await verifyDelivery(raw, headers, keySet, expected);
    expect(delivery).toEqual(arrival?.body);

    const changed = raw.slice();
    const at = changed.length - 2;
    changed[at] = (changed[at] ?? 0) ^ 1;
    await expect(verifyDelivery(changed, headers, keySet, expected)).rejects.toThrow();
    const stranger = createLocalJWKSet({
      keys: [
        {
          ...(await exportJWK((await generateKeyPair("EdDSA")).publicKey)),
          kid: arrival?.key_id ?? "",
        },
      ],
    });
    await expect(verifyDelivery(raw, headers, stranger, expected)).rejects.toThrow();
    await expect(
      verifyDelivery(raw, { ...headers, keyId: "another" }, keySet, expected),
    ).rejects.toThrow(/x-service-key-id/);
    const later = Math.floor(Date.now() / 1000) + MAX_SIGNATURE_AGE_SECONDS + 5;
    await expect(
      verifyDelivery(raw, headers, keySet, { ...expected, nowSeconds: later }),
    ).rejects.toThrow(/too old/);
    const attached = `${arrival?.signature?.split(".")[0]}.e30.${arrival?.signature?.split(".")[2]}`;
    await expect(
      verifyDelivery(raw, { ...headers, signature: attached }, keySet, expected),
    ).rejects.toThrow(/detached/);
    // A receiver that checks whom the delivery was signed for refuses it anywhere else.
    const elsewhere = { endpointId: crypto.randomUUID() };
    await expect(verifyDelivery(raw, headers, keySet, elsewhere)).rejects.toThrow(
      /another endpoint/,
    );
    const otherOrg = { ...expected, logId: logIdFor(crypto.randomUUID()) };
    await expect(verifyDelivery(raw, headers, keySet, otherOrg)).rejects.toThrow(/another org/);
  });
});
