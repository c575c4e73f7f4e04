import { z } from "@hono/zod-openapi";
import { sql } from "drizzle-orm";
import { base64url, fromBase64url, utf8 } from "#audit/encoding";
import type { Tenant } from "../auth/tenant";
import type { Database } from "../db/client";
import type { Env } from "../env";
import { logError } from "../lib/log";

/**
 * ACP checkout telemetry in an assess request's `risk_data` (docs/rails.md, "Checkout
 * telemetry"): ACP 2026-04-17 `schema.agentic_checkout.json`, `$defs.RiskSignals` (what a
 * `CheckoutSessionCompleteRequest` carries as `risk_signals`), the same five members, each
 * bounded. Personal data: never stored. What is kept is a keyed digest of the device and of the
 * network, per agent, so that the next request can say whether they are new for the agent.
 */

/** Printable text of another system, bounded (no control characters: logs, headers). */
function foreignText(max: number) {
  return z
    .string()
    .min(1)
    .max(max)
    .regex(/^[^\p{Cc}]*$/u, "must not contain control characters");
}

export const CheckoutTelemetry = z
  .strictObject({
    ip_address: z.union([z.ipv4(), z.ipv6()], { error: () => "must be an IPv4 or IPv6 address" }),
    user_agent: foreignText(1024),
    accept_language: foreignText(256),
    session_id: foreignText(256),
    device_fingerprint: foreignText(256),
  })
  .partial()
  .openapi("CheckoutTelemetry", {
    description:
      "ACP checkout telemetry (`RiskSignals` of ACP 2026-04-17): the buyer's surface for this " +
      "call. Read, never stored: a keyed digest of the device and the network (/24, /48) is " +
      "kept per agent, for the signals `device_first_seen` and `network_first_seen`",
    example: { ip_address: "203.0.113.7", device_fingerprint: "fp_abc123" },
  });
export type CheckoutTelemetry = z.infer<typeof CheckoutTelemetry>;

/** The digests of one request's telemetry: base64url HMAC-SHA-256, 43 characters each. */
export interface TelemetryDigests {
  device: string | null;
  network: string | null;
}

/**
 * The network of an address: an IPv4 /24 or an IPv6 /48 (an IPv4-mapped IPv6 address is its
 * IPv4), so a client that moves within its provider's block is not new. Null for text that is
 * not an address (the schema let none through).
 */
export function networkOf(address: string): string | null {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  const v4 = mapped ? mapped[1] : address;
  if (v4 !== undefined && /^\d+\.\d+\.\d+\.\d+$/.test(v4)) {
    return `${v4.split(".").slice(0, 3).join(".")}.0/24`;
  }
  const groups = ipv6Groups(address);
  return groups === null ? null : `${groups.slice(0, 3).join(":")}::/48`;
}

/** The eight 16-bit groups of an IPv6 address, lowercase, unpadded; null when it is not one. */
function ipv6Groups(address: string): string[] | null {
  const [head, tail, extra] = address.toLowerCase().split("::");
  if (extra !== undefined) return null;
  const part = (text: string | undefined) => (text ? text.split(":") : []);
  let groups = part(head);
  if (tail !== undefined) {
    const rest = part(tail);
    const fill = 8 - groups.length - rest.length;
    if (fill < 1) return null;
    groups = [...groups, ...Array(fill).fill("0"), ...rest];
  }
  // A dotted tail (an embedded IPv4 address) is past the /48 the network keeps.
  const last = groups[groups.length - 1] ?? "";
  if (last.includes(".")) groups = [...groups.slice(0, -1), "0", "0"];
  if (groups.length !== 8 || !groups.every((g) => /^[0-9a-f]{1,4}$/.test(g))) return null;
  return groups.map((g) => Number.parseInt(g, 16).toString(16));
}

// Derived once per isolate per secret value, as the console's keys (src/sign-in/keys.ts).
const keys = new Map<string, Promise<CryptoKey>>();

/** HMAC-SHA-256 key of the digests: HKDF of PRINCIPAL_MASTER_KEY with an `info` of its own. */
async function digestKey(secret: string): Promise<CryptoKey> {
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

/** The most agents a digest's read names: past them, "new for the agent" is not judged. */
export const SEEN_AGENTS_READ = 64;

/** What the context batch reads of the digests: per kind, how many agents and the latest. */
export interface TelemetrySeenRow {
  kind: "device" | "network";
  agents: number;
  recent: string[];
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

/** Whether each digest is new for the agent: null when not sent, or not judged. */
export interface TelemetrySeen {
  deviceSeen: boolean | null;
  networkSeen: boolean | null;
}

export function telemetrySeen(
  digests: TelemetryDigests,
  rows: TelemetrySeenRow[],
  agentId: string | null,
): TelemetrySeen {
  const seen = (kind: TelemetrySeenRow["kind"], digest: string | null) => {
    if (digest === null || agentId === null) return null;
    const row = rows.find((r) => r.kind === kind);
    if (!row) return false;
    if (row.recent.includes(agentId)) return true;
    return row.agents > SEEN_AGENTS_READ ? null : false;
  };
  return {
    deviceSeen: seen("device", digests.device),
    networkSeen: seen("network", digests.network),
  };
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
