/**
 * Verifying an agent-risk webhook delivery (docs/webhooks.md), with jose. Runs anywhere jose
 * runs: Node 20+, Workers, Deno, Bun, browsers.
 */
import { base64url, type CompactVerifyGetKey, compactVerify } from "jose";

export interface Delivery {
  /** The delivery id: the same on every retry. Deduplicate on it. */
  id: string;
  type: string;
  /** When the event happened, in Unix seconds. */
  created: number;
  livemode: boolean;
  data: Record<string, unknown>;
}

/** How old a signature may be; retries are signed afresh, so a replay is the only old one. */
export const MAX_SIGNATURE_AGE_SECONDS = 300;

/** What this receiver expects a delivery to be signed for. */
export interface Expected {
  /** The endpoint's id (the create answer's `id`): one signed for another is refused. */
  endpointId: string;
  /** Optional: the org's public log id (`log_id` of its Risk Payloads and checkpoints). */
  logId?: string;
  nowSeconds?: number;
}

/**
 * Verifies a delivery over the exact bytes received (never a re-serialised body) against the
 * service's key set, and answers it parsed. Throws if anything is off: answer non-2xx then.
 *
 * `x-service-signature` is a detached compact JWS, `header..signature`: the payload is the
 * request body itself, put back between the dots before verifying. Its protected header names
 * the endpoint the delivery was signed for (`endpoint_id`) and the org (`log_id`): one service
 * key signs every org's deliveries, so without that check a delivery captured at one endpoint
 * could be replayed to another.
 */
export async function verifyDelivery(
  rawBody: Uint8Array,
  headers: { signature: string | null | undefined; keyId: string | null | undefined },
  keys: CompactVerifyGetKey,
  expected: Expected,
): Promise<Delivery> {
  const nowSeconds = expected.nowSeconds ?? Math.floor(Date.now() / 1000);
  const parts = headers.signature?.split(".") ?? [];
  if (parts.length !== 3 || parts[1] !== "")
    throw new Error("x-service-signature is not a detached JWS");
  const [header, , signature] = parts;
  const { protectedHeader } = await compactVerify(
    `${header}.${base64url.encode(rawBody)}.${signature}`,
    keys,
    { algorithms: ["EdDSA"] },
  );
  if (protectedHeader.typ !== "webhook+jws") throw new Error("not a webhook signature");
  if (protectedHeader.kid !== headers.keyId) throw new Error("x-service-key-id does not match");
  if (protectedHeader.endpoint_id !== expected.endpointId) {
    throw new Error("signed for another endpoint");
  }
  if (expected.logId !== undefined && protectedHeader.log_id !== expected.logId) {
    throw new Error("signed for another org");
  }
  const iat = protectedHeader.iat;
  if (typeof iat !== "number" || Math.abs(nowSeconds - iat) > MAX_SIGNATURE_AGE_SECONDS) {
    throw new Error("signature too old (a replay?) or clock skew");
  }
  return JSON.parse(new TextDecoder().decode(rawBody)) as Delivery;
}
