import { base64url, compactVerify, errors } from "jose";
import { type KeySource, keyGetter } from "./key-set.js";
import { asVerificationError } from "./risk-payload.js";
import { verifyStandardSignature } from "./standard-webhooks.js";
import { VerificationError } from "./verification-error.js";
import type { WebhookEvent } from "./webhook-event.js";

/** The protected header `typ` of the service's webhook signature. */
export const WEBHOOK_TYP = "webhook+jws";

export type VerifyWebhookOptions = (KeySource | { jwks?: never; jwksUrl?: never }) & {
  /**
   * The endpoint's `whsec_` secret (the create answer's `secret`), or two during a rotation:
   * checks the Standard Webhooks signature.
   */
  secret?: string | string[];
  /**
   * Your endpoint's id: the JWS header must name it (a delivery meant for another fails).
   * Required when verifying with `jwks`/`jwksUrl` and no `secret`.
   */
  endpointId?: string;
  /** How far the attempt's time may be from now, either way. Default 300 s. */
  toleranceSeconds?: number;
  /** "Now", for tests. */
  currentDate?: Date;
};

type HeaderSource = Headers | Record<string, string | string[] | undefined>;

function header(headers: HeaderSource, name: string): string | undefined {
  if (typeof (headers as Headers).get === "function") {
    return (headers as Headers).get(name) ?? undefined;
  }
  const record = headers as Record<string, string | string[] | undefined>;
  const key = Object.keys(record).find((k) => k.toLowerCase() === name);
  const value = key === undefined ? undefined : record[key];
  return Array.isArray(value) ? value.join(", ") : value;
}

function required(headers: HeaderSource, name: string): string {
  const value = header(headers, name);
  if (!value) throw new VerificationError("header_missing", `no ${name} header`);
  return value;
}

/**
 * Verifies a webhook delivery over its exact raw body and returns the event. With `jwks` or
 * `jwksUrl`, the service's detached JWS (`x-service-signature`: EdDSA, `typ` webhook+jws, the
 * endpoint it was signed for); with `secret`, the Standard Webhooks signature; with both, both.
 * Either way the attempt's time must be within the window and the body's id be `webhook-id`.
 * Throws VerificationError. WebCrypto alone: Node 20, Workers and browsers.
 */
export async function verifyWebhook(
  rawBody: string | Uint8Array,
  headers: HeaderSource,
  options: VerifyWebhookOptions,
): Promise<WebhookEvent> {
  const body = new Uint8Array(
    typeof rawBody === "string" ? new TextEncoder().encode(rawBody) : rawBody,
  );
  const secrets = options.secret === undefined ? [] : [options.secret].flat();
  const withKeys = options.jwks !== undefined || options.jwksUrl !== undefined;
  if (!withKeys && secrets.length === 0) {
    throw new TypeError("pass `jwks`, `jwksUrl` or `secret`: something to verify with");
  }
  // The service signs every org's deliveries with the same key set: without the endpoint's own
  // secret, only the endpoint id in the JWS header ties a delivery to you, not to another org.
  if (withKeys && secrets.length === 0 && options.endpointId === undefined) {
    throw new TypeError(
      "with `jwks` or `jwksUrl` alone, pass `endpointId`: another org's deliveries carry the same signature key",
    );
  }
  const now = Math.floor((options.currentDate?.getTime() ?? Date.now()) / 1000);
  const tolerance = options.toleranceSeconds ?? 300;
  const inWindow = (seconds: number, what: string) => {
    if (!Number.isSafeInteger(seconds) || Math.abs(now - seconds) > tolerance) {
      throw new VerificationError(
        "timestamp_out_of_window",
        `${what} is not within ${tolerance} s of now`,
      );
    }
  };

  const id = required(headers, "webhook-id");
  const timestamp = required(headers, "webhook-timestamp");
  inWindow(/^\d+$/.test(timestamp) ? Number(timestamp) : Number.NaN, "webhook-timestamp");
  if (secrets.length > 0) {
    const signature = required(headers, "webhook-signature");
    await verifyStandardSignature(secrets, id, timestamp, body, signature);
  }
  if (withKeys)
    await verifyServiceSignature(
      body,
      headers,
      options as KeySource,
      options.endpointId,
      timestamp,
    );

  let event: WebhookEvent;
  try {
    event = JSON.parse(
      new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(body),
    ) as WebhookEvent;
  } catch {
    throw new VerificationError("malformed", "the body is not JSON");
  }
  if (event === null || typeof event !== "object" || typeof event.type !== "string") {
    throw new VerificationError("malformed", "the body is not an event");
  }
  if (event.id !== id)
    throw new VerificationError("claim_invalid", "the body's id is not webhook-id");
  return event;
}

async function verifyServiceSignature(
  body: Uint8Array,
  headers: HeaderSource,
  keys: KeySource,
  endpointId: string | undefined,
  timestamp: string,
): Promise<void> {
  const detached = required(headers, "x-service-signature");
  const [protectedHeader, empty, signature] = detached.split(".");
  if (protectedHeader === undefined || empty !== "" || signature === undefined) {
    throw new VerificationError("malformed", "x-service-signature is not a detached compact JWS");
  }
  let header: Record<string, unknown>;
  try {
    // The payload is the raw body, exactly as received (RFC 7515 appendix F).
    const token = `${protectedHeader}.${base64url.encode(body)}.${signature}`;
    ({ protectedHeader: header } = await compactVerify(token, keyGetter(keys), {
      algorithms: ["EdDSA"],
    }));
  } catch (error) {
    if (error instanceof errors.JOSEError || error instanceof VerificationError) {
      throw asVerificationError(error);
    }
    throw error;
  }
  if (header.typ !== WEBHOOK_TYP) {
    throw new VerificationError("claim_invalid", `the signature's typ is not ${WEBHOOK_TYP}`);
  }
  if (header.iat !== Number(timestamp)) {
    throw new VerificationError("claim_invalid", "the signature's iat is not webhook-timestamp");
  }
  if (endpointId !== undefined && header.endpoint_id !== endpointId) {
    throw new VerificationError("claim_invalid", "the delivery was signed for another endpoint");
  }
}
