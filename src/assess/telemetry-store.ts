import { sql } from "drizzle-orm";
import { base64url, fromBase64url, utf8 } from "#audit/encoding";
import type { Tenant } from "../auth/tenant";
import type { Database } from "../db/client";
import type { Env } from "../env";
import { logError } from "../lib/log";
import {
  type CheckoutTelemetry,
  networkOf,
  SEEN_AGENTS_READ,
  type TelemetryDigests,
} from "./telemetry";

/**
 * What the assess path keeps of checkout telemetry, and reads back (docs/rails.md, "Checkout
 * telemetry"): keyed digests only, per agent, in `agent_telemetry`.
 */

// Derived once per isolate per secret value, as the console's keys (src/sign-in/keys.ts).
const keys = new Map<string, Promise<Awaited<ReturnType<typeof crypto.subtle.importKey>>>>();

/** HMAC-SHA-256 key of the digests: HKDF of PRINCIPAL_MASTER_KEY with an `info` of its own. */
async function digestKey(
  secret: string,
): Promise<Awaited<ReturnType<typeof crypto.subtle.importKey>>> {
  const jwk = JSON.parse(secret) as { kty?: unknown; k?: unknown };
  if (jwk.kty !== "oct" || typeof jwk.k !== "string") throw new Error("not an oct JWK");
  const base = await crypto.subtle.importKey("raw", fromBase64url(jwk.k), "HKDF", false, [
    "deriveKey",
  ]);
  return crypto.subtle.deriveKey(
    {
      name: "HKDF",
      hash: "SHA-256",
      salt: new Uint8Array(0),
      info: utf8("agent-risk/agent-telemetry/v1"),
    },
    base,
    { name: "HMAC", hash: "SHA-256", length: 256 },
    false,
    ["sign"],
  );
}

/**
 * The request's digests, or null when it sent no device and no address, or when the key is
 * missing or unusable (the signals are then not computed, and nothing is kept: never raw).
 */
export async function telemetryDigests(
  env: Pick<Env, "PRINCIPAL_MASTER_KEY">,
  telemetry: CheckoutTelemetry | null,
): Promise<TelemetryDigests | null> {
  const device = telemetry?.device_fingerprint ?? null;
  const network = telemetry?.ip_address ? networkOf(telemetry.ip_address) : null;
  const secret = env.PRINCIPAL_MASTER_KEY;
  if ((device === null && network === null) || !secret) return null;
  let pending = keys.get(secret);
  if (!pending) {
    pending = digestKey(secret);
    keys.set(secret, pending);
    pending.catch(() => keys.delete(secret));
  }
  try {
    const key = await pending;
    const digest = async (text: string) =>
      base64url(new Uint8Array(await crypto.subtle.sign("HMAC", key, utf8(text))));
    return {
      device: device === null ? null : await digest(`device:${device}`),
      network: network === null ? null : await digest(`network:${network}`),
    };
  } catch {
    logError("telemetry digest key unusable");
    return null;
  }
}

/** The context batch's statement: which agents of this org and mode saw each digest. */
export function telemetryRead(db: Database, digests: TelemetryDigests, livemode: boolean) {
  return db.execute(sql`select kind, count(*)::int as agents,
    (array_agg(agent_id::text order by last_seen_at desc))[1:${SEEN_AGENTS_READ}] as recent
    from agent_telemetry
    where livemode = ${livemode}
      and ((kind = 'device' and digest = ${digests.device})
        or (kind = 'network' and digest = ${digests.network}))
    group by kind`);
}

/**
 * Remembers the digests for the agent, after the response (one statement; a later request
 * reads them). Best effort: a failure loses one sighting, never the answer.
 */
export function rememberTelemetry(
  tenant: Tenant,
  digests: TelemetryDigests,
  agentId: string,
  at: string,
): void {
  const rows = (["device", "network"] as const)
    .map((kind) => ({ kind, digest: digests[kind] }))
    .filter((row): row is { kind: "device" | "network"; digest: string } => row.digest !== null);
  if (rows.length === 0) return;
  const values = sql.join(
    rows.map(
      (row) =>
        sql`(nullif(current_setting('app.org_id', true), '')::uuid, ${tenant.livemode},
          ${row.kind}, ${row.digest}, ${agentId}::uuid, ${at}::timestamptz, ${at}::timestamptz)`,
    ),
    sql`, `,
  );
  const write = tenant
    .batch((db) => [
      db.execute(sql`insert into agent_telemetry
        (org_id, livemode, kind, digest, agent_id, first_seen_at, last_seen_at)
        values ${values}
        on conflict (org_id, livemode, kind, digest, agent_id)
        do update set last_seen_at = greatest(agent_telemetry.last_seen_at, excluded.last_seen_at)`),
    ])
    .catch(() => logError("agent telemetry not remembered"));
  tenant.later(write);
}
