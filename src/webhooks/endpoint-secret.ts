/**
 * Each endpoint's Standard Webhooks secret (https://www.standardwebhooks.com/): made at
 * creation, shown once, kept sealed, and used to sign every delivery's `webhook-signature`.
 *
 * A secret is `whsec_` + the base64 of 32 random bytes, the form receivers' libraries expect.
 * The Worker must read it back to sign, so it is encrypted at rest rather than hashed: AES-256-GCM
 * under a key derived (HKDF-SHA-256, info `agent-risk/webhook-secret/v1`) from the Worker secret
 * PRINCIPAL_MASTER_KEY, so the database never holds a usable secret and this purpose cannot
 * open a principal's data nor the reverse. Stored as `v1.<master kid>.<iv>.<ciphertext>`
 * (base64url), with the org and endpoint ids as associated data: a sealed secret copied to
 * another endpoint's row does not open.
 */

import { base64ToBytes, base64url, bytesToBase64, fromBase64url, utf8 } from "#audit/encoding";
import type { Env } from "../env";
import { ApiError } from "../errors";
import { logError } from "../lib/log";

export const SECRET_PREFIX = "whsec_";
const SECRET_BYTES = 32;
const VERSION = "v1";
const IV_BYTES = 12;
const KID = /^[A-Za-z0-9_-]{1,64}$/;

/** The row a sealed secret belongs to. */
export interface EndpointBinding {
  orgId: string;
  endpointId: string;
}

interface SecretKey {
  kid: string;
  key: CryptoKey;
}

/** A fresh secret, as the receiver will hold it. */
export function newEndpointSecret(): string {
  return SECRET_PREFIX + bytesToBase64(crypto.getRandomValues(new Uint8Array(SECRET_BYTES)));
}

async function deriveKey(secret: string): Promise<SecretKey> {
  const jwk = JSON.parse(secret) as { kty?: unknown; k?: unknown; kid?: unknown };
  if (jwk.kty !== "oct" || typeof jwk.k !== "string") throw new Error("not an oct JWK");
  if (typeof jwk.kid !== "string" || !KID.test(jwk.kid)) throw new Error("kid missing or unusable");
  const bytes = fromBase64url(jwk.k);
  if (bytes.length !== 32) throw new Error("k is not 256 bits");
  const base = await crypto.subtle.importKey("raw", bytes, "HKDF", false, ["deriveKey"]);
  const key = await crypto.subtle.deriveKey(
    {
      name: "HKDF",
      hash: "SHA-256",
      salt: new Uint8Array(0),
      info: utf8("agent-risk/webhook-secret/v1"),
    },
    base,
    { name: "AES-GCM", length: 256 },
    false,
    ["encrypt", "decrypt"],
  );
  return { kid: jwk.kid, key };
}

// Derived once per isolate per master key value; a rotated master key arrives as a new value.
const keys = new Map<string, Promise<SecretKey>>();

async function secretKey(env: Env): Promise<SecretKey> {
  const secret = env.PRINCIPAL_MASTER_KEY;
  if (!secret) throw new ApiError("encryption_key_unavailable");
  let pending = keys.get(secret);
  if (!pending) {
    pending = deriveKey(secret);
    keys.set(secret, pending);
    pending.catch(() => keys.delete(secret));
  }
  try {
    return await pending;
  } catch (cause) {
    logError("webhook secret key unusable");
    throw new ApiError("encryption_key_unavailable", undefined, { cause });
  }
}

function associatedData(binding: EndpointBinding, kid: string) {
  return utf8(
    JSON.stringify(["agent-risk/webhook-secret", VERSION, binding.orgId, binding.endpointId, kid]),
  );
}

/** Encrypts a secret for its endpoint's row. */
export async function sealEndpointSecret(
  env: Env,
  binding: EndpointBinding,
  secret: string,
): Promise<string> {
  const { kid, key } = await secretKey(env);
  const iv = crypto.getRandomValues(new Uint8Array(IV_BYTES));
  const sealed = await crypto.subtle.encrypt(
    { name: "AES-GCM", iv, additionalData: associatedData(binding, kid) },
    key,
    utf8(secret),
  );
  return [VERSION, kid, base64url(iv), base64url(new Uint8Array(sealed))].join(".");
}

/** Decrypts a secret sealed for this endpoint; throws on any other row's or a changed one. */
export async function openEndpointSecret(
  env: Env,
  binding: EndpointBinding,
  sealed: string,
): Promise<string> {
  const [version, kid, iv, ciphertext, ...rest] = sealed.split(".");
  const { kid: currentKid, key } = await secretKey(env);
  if (version !== VERSION || kid !== currentKid || !iv || !ciphertext || rest.length > 0) {
    throw new Error("webhook secret sealed under another key or format");
  }
  const plain = await crypto.subtle.decrypt(
    { name: "AES-GCM", iv: fromBase64url(iv), additionalData: associatedData(binding, kid) },
    key,
    fromBase64url(ciphertext),
  );
  return new TextDecoder().decode(plain);
}

/**
 * The `webhook-signature` header: `v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">` for
 * each secret, space separated (during a rotation's overlap: the new secret's first).
 */
export async function standardSignature(
  secrets: string[],
  id: string,
  timestamp: number,
  body: Uint8Array,
): Promise<string> {
  const prefix = utf8(`${id}.${timestamp}.`);
  const content = new Uint8Array(prefix.length + body.length);
  content.set(prefix);
  content.set(body, prefix.length);
  const signatures = await Promise.all(
    secrets.map(async (secret) => {
      const key = await crypto.subtle.importKey(
        "raw",
        base64ToBytes(secret.slice(SECRET_PREFIX.length)),
        { name: "HMAC", hash: "SHA-256" },
        false,
        ["sign"],
      );
      const mac = await crypto.subtle.sign("HMAC", key, content);
      return `v1,${bytesToBase64(new Uint8Array(mac))}`;
    }),
  );
  return signatures.join(" ");
}
