import { env, SELF } from "cloudflare:test";
import { expect } from "vitest";
import { call, type RequestBody } from "./api";
import { ownerSql } from "./db";

export type Json = Record<string, any>;

export interface ReceiverConfig {
  mode?: "ok" | "fail" | "hang" | "gone";
  fail_first?: number;
  lose_answer_first?: number;
  status?: number;
  token?: string;
  /** The endpoint's whsec_ secret: the receiver also verifies with `standardwebhooks`. */
  secret?: string;
}

let receivers = 0;

/**
 * A named webhook receiver on the loopback fixture server, verifying signatures against the
 * key set the Worker publishes (fetched here, as a receiver would). Answers its URL.
 */
export async function receiver(
  config: ReceiverConfig = {},
): Promise<{ name: string; url: string }> {
  const name = `r${Date.now().toString(36)}-${++receivers}-${crypto.randomUUID().slice(0, 8)}`;
  const jwks = await (await SELF.fetch("https://risk.test/.well-known/jwks.json")).json();
  const res = await fetch(`${env.TEST_FIXTURE_URL}/hooks/${name}/config`, {
    method: "PUT",
    body: JSON.stringify({ mode: "ok", ...config, jwks }),
  });
  expect(res.status).toBe(204);
  return { name, url: `${env.TEST_FIXTURE_URL}/hooks/${name}` };
}

/** Changes a receiver's behaviour, keeping what it has received. */
export async function reconfigure(name: string, config: ReceiverConfig) {
  const jwks = await (await SELF.fetch("https://risk.test/.well-known/jwks.json")).json();
  await fetch(`${env.TEST_FIXTURE_URL}/hooks/${name}/config`, {
    method: "PUT",
    body: JSON.stringify({ mode: "ok", ...config, jwks }),
  });
}

export interface Arrival {
  id: string | null;
  type: string | null;
  attempt: string | null;
  key_id: string | null;
  verified: boolean;
  token: string | null;
  duplicate: boolean;
  answered: number | null;
  body: Json;
  raw: string;
  signature: string | null;
  webhook: { id: string | null; timestamp: string | null; signature: string | null };
  standard_verified: boolean | null;
  at: number;
}

export async function received(
  name: string,
): Promise<{ arrivals: Arrival[]; processed: string[] }> {
  const res = await fetch(`${env.TEST_FIXTURE_URL}/hooks/${name}/log`);
  return res.json();
}

/** Polls until `check` returns a value (not undefined), or fails after `timeoutMs`. */
export async function eventually<T>(
  check: () => Promise<T | undefined>,
  timeoutMs = 20_000,
  what = "condition",
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export async function createEndpoint(
  key: string,
  body: RequestBody<"/v1/webhook-endpoints", "POST">,
) {
  const res = await call("/v1/webhook-endpoints", { method: "POST", key, body });
  if (res.status !== 201) throw new Error(`endpoint creation failed: ${res.status} ${res.text}`);
  return res.json;
}

export async function deliveries(key: string, endpointId: string, query = "") {
  const res = await call(`/v1/webhook-endpoints/${endpointId}/deliveries?${query}`, { key });
  expect(res.status).toBe(200);
  return res.json.data;
}

/** Waits until every delivery of the endpoint has left `pending`; answers them. */
export async function settled(key: string, endpointId: string, count: number, timeoutMs = 25_000) {
  return eventually(
    async () => {
      const all = await deliveries(key, endpointId);
      return all.length >= count && all.every((d) => d.status !== "pending") ? all : undefined;
    },
    timeoutMs,
    `${count} settled deliveries`,
  );
}

/**
 * An `audit.integrity_alert` written straight into the org's outbox, as the product paths
 * write events: the fan-out trigger makes its deliveries; no message is sent for them.
 */
export async function outboxAlert(orgId: string, data: Json = {}, id = crypto.randomUUID()) {
  await ownerSql`insert into events (id, org_id, type, data)
    values (${id}, ${orgId}, 'audit.integrity_alert', ${JSON.stringify(data)})`;
  return id;
}
