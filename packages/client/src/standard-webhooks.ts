import { VerificationError } from "./verification-error.js";

/**
 * The Standard Webhooks signature (standardwebhooks.com), on WebCrypto alone so it runs in
 * browsers and Workers too: `v1,<base64 HMAC-SHA256("<id>.<timestamp>.<body>")>` under the
 * endpoint's `whsec_` secret, one entry per signing secret, space separated.
 */
const PREFIX = "whsec_";

async function hmacKey(secret: string): ReturnType<typeof crypto.subtle.importKey> {
  const encoded = secret.startsWith(PREFIX) ? secret.slice(PREFIX.length) : secret;
  let bytes: Uint8Array<ArrayBuffer>;
  try {
    bytes = Uint8Array.from(atob(encoded), (c) => c.charCodeAt(0));
  } catch {
    throw new TypeError("the webhook secret is not `whsec_` followed by base64");
  }
  return crypto.subtle.importKey("raw", bytes, { name: "HMAC", hash: "SHA-256" }, false, [
    "verify",
  ]);
}

function base64Bytes(text: string): Uint8Array<ArrayBuffer> | null {
  try {
    return Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
  } catch {
    return null;
  }
}

/**
 * Throws unless one `v1` entry of `signatureHeader` is the HMAC under one of `secrets`.
 * WebCrypto's verify compares in constant time.
 */
export async function verifyStandardSignature(
  secrets: string[],
  id: string,
  timestamp: string,
  body: Uint8Array<ArrayBuffer>,
  signatureHeader: string,
): Promise<void> {
  const prefix = new TextEncoder().encode(`${id}.${timestamp}.`);
  const signed = new Uint8Array(prefix.length + body.length);
  signed.set(prefix);
  signed.set(body, prefix.length);
  const candidates = signatureHeader
    .split(" ")
    .map((entry) => entry.split(","))
    .filter(([version, value]) => version === "v1" && value !== undefined)
    .map(([, value]) => base64Bytes(value as string))
    .filter((bytes): bytes is Uint8Array<ArrayBuffer> => bytes !== null);
  for (const secret of secrets) {
    const key = await hmacKey(secret);
    for (const signature of candidates) {
      if (await crypto.subtle.verify("HMAC", key, signature, signed)) return;
    }
  }
  throw new VerificationError(
    "signature_invalid",
    "no webhook-signature entry matches the endpoint's secret",
  );
}
