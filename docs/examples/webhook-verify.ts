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

/**
 * Verifies a delivery over the exact bytes received (never a re-serialised body) against the
 * service's key set, and answers it parsed. Throws if anything is off: answer non-2xx then.
 *
 * `x-service-signature` is a detached compact JWS, `header..signature`: the payload is the
 * request body itself, put back between the dots before verifying.
 */
export async function verifyDelivery(
  rawBody: Uint8Array,
  headers: { signature: string | null | undefined; keyId: string | null | undefined },
  keys: CompactVerifyGetKey,
  nowSeconds = Math.floor(Date.now() / 1000),
): Promise<Delivery> {
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
  const iat = protectedHeader.iat;
  if (typeof iat !== "number" || Math.abs(nowSeconds - iat) > MAX_SIGNATURE_AGE_SECONDS) {
    throw new Error("signature too old (a replay?) or clock skew");
  }
  return JSON.parse(new TextDecoder().decode(rawBody)) as Delivery;
}
