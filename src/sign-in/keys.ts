/**
 * The console's two server-side keys, derived (HKDF-SHA-256) from the Worker secret
 * PRINCIPAL_MASTER_KEY with an `info` of their own, as the webhook secrets' key is: no new
 * secret to deploy, and neither purpose can open or forge the other's (nor a principal's data).
 *
 * - `login`: AES-256-GCM, seals the short-lived `__Host-ar_login` cookie (state, nonce, PKCE
 *   verifier) so a browser can neither read nor forge it.
 * - `csrf`: HMAC-SHA-256, the CSRF token of a session cookie (docs/console.md, "CSRF").
 */

import { fromBase64url, utf8 } from "#audit/encoding";
import type { Env } from "../env";
import { ApiError } from "../errors";
import { logError } from "../lib/log";

export interface ConsoleKeys {
  login: CryptoKey;
  csrf: CryptoKey;
}

async function derive(secret: string): Promise<ConsoleKeys> {
  const jwk = JSON.parse(secret) as { kty?: unknown; k?: unknown };
  if (jwk.kty !== "oct" || typeof jwk.k !== "string") throw new Error("not an oct JWK");
  const bytes = fromBase64url(jwk.k);
  if (bytes.length !== 32) throw new Error("k is not 256 bits");
  const base = await crypto.subtle.importKey("raw", bytes, "HKDF", false, ["deriveKey"]);
  const hkdf = (info: string) => ({
    name: "HKDF",
    hash: "SHA-256",
    salt: new Uint8Array(0),
    info: utf8(info),
  });
  const [login, csrf] = await Promise.all([
    crypto.subtle.deriveKey(
      hkdf("agent-risk/console-login/v1"),
      base,
      { name: "AES-GCM", length: 256 },
      false,
      ["encrypt", "decrypt"],
    ),
    crypto.subtle.deriveKey(
      hkdf("agent-risk/console-csrf/v1"),
      base,
      { name: "HMAC", hash: "SHA-256", length: 256 },
      false,
      ["sign"],
    ),
  ]);
  return { login, csrf };
}

// Derived once per isolate per secret value; a rotated secret arrives as a new value.
const derived = new Map<string, Promise<ConsoleKeys>>();

/** The console's keys. Missing or unusable master key: 503, never an unsealed cookie. */
export async function consoleKeys(env: Env): Promise<ConsoleKeys> {
  const secret = env.PRINCIPAL_MASTER_KEY;
  if (!secret) throw new ApiError("encryption_key_unavailable");
  let pending = derived.get(secret);
  if (!pending) {
    pending = derive(secret);
    derived.set(secret, pending);
    pending.catch(() => derived.delete(secret));
  }
  try {
    return await pending;
  } catch (cause) {
    logError("console keys unusable");
    throw new ApiError("encryption_key_unavailable", undefined, { cause });
  }
}
