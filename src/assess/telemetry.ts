import { z } from "@hono/zod-openapi";

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
  // A dotted tail (an embedded IPv4 address) is two groups, past the /48 the network keeps.
  const part = (text: string | undefined) =>
    (text ? text.split(":") : []).flatMap((g) => (g.includes(".") ? ["0", "0"] : [g]));
  let groups = part(head);
  if (tail !== undefined) {
    const rest = part(tail);
    const fill = 8 - groups.length - rest.length;
    if (fill < 1) return null;
    groups = [...groups, ...Array(fill).fill("0"), ...rest];
  }
  if (groups.length !== 8 || !groups.every((g) => /^[0-9a-f]{1,4}$/.test(g))) return null;
  return groups.map((g) => Number.parseInt(g, 16).toString(16));
}

/** The most agents a digest's read names: past them, "new for the agent" is not judged. */
export const SEEN_AGENTS_READ = 64;

/** What the context batch reads of the digests: per kind, how many agents and the latest. */
export interface TelemetrySeenRow {
  kind: "device" | "network";
  agents: number;
  recent: string[];
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
