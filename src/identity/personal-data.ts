/**
 * Envelope encryption of a principal's personal data, so that it can be crypto-erased.
 *
 * Each seal draws a fresh 256-bit data key, encrypts the JSON of the data with it (AES-256-GCM),
 * and wraps the data key under the master key (the Worker secret PRINCIPAL_MASTER_KEY, also
 * AES-256-GCM). The database holds only the two strings of `Sealed`; the master key never
 * reaches it. Erasure is the caller destroying `wrappedKey` (setting it to null): the data key
 * then exists nowhere, and the ciphertext left behind cannot be opened by anyone, the service
 * and its master key included. No backup of the row can bring the data back either, once the
 * backups holding the old `wrappedKey` have expired.
 *
 * Encodings (base64url without padding; fields separated by dots, which base64url never uses):
 * - wrappedKey: `v1.<master kid>.<iv>.<AES-GCM of the 32 raw data key bytes, tag appended>`;
 *   the kid tells a future master-key rotation which key wrapped what.
 * - ciphertext: `v1.<iv>.<AES-GCM of UTF-8 JSON of the data, tag appended>`.
 * - Additional authenticated data, the UTF-8 of a JSON array, so that no id can spill into
 *   another field: `["agent-risk/principal","v1","key",<org id>,<principal id>,<master kid>]`
 *   for the wrap, `["agent-risk/principal","v1","data",<org id>,<principal id>]` for the data.
 *   A wrapped key or ciphertext copied to another principal's or org's row does not open, and
 *   the two purposes cannot be swapped for one another.
 *
 * AES-GCM rather than AES-KW for the wrap: AES-KW (which workerd has) takes no associated data,
 * so it could not bind the data key to its row.
 */

import { base64url, fromBase64url } from "#audit/encoding";
import type { Env } from "../env";
import { ApiError } from "../errors";
import { logError } from "../lib/log";

/** The imported master key. Its key wraps and unwraps data keys only, and cannot be exported. */
export interface MasterKey {
  readonly kid: string;
  readonly key: CryptoKey;
}

/** The row the data belongs to: sealed data opens only for the same org and principal. */
export interface PersonalDataBinding {
  orgId: string;
  principalId: string;
}

export interface Sealed {
  wrappedKey: string;
  ciphertext: string;
}

const VERSION = "v1";
const IV_BYTES = 12;
// A kid is written into every wrappedKey, so it must not contain the separator.
const KID = /^[A-Za-z0-9_-]{1,64}$/;
const utf8 = new TextEncoder();

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

async function importMasterKey(secret: string): Promise<MasterKey> {
  const jwk: unknown = JSON.parse(secret);
  if (!isRecord(jwk) || jwk.kty !== "oct" || typeof jwk.k !== "string") {
    throw new Error("not an oct JWK");
  }
  if (typeof jwk.kid !== "string" || !KID.test(jwk.kid)) throw new Error("kid missing or unusable");
  const bytes = fromBase64url(jwk.k);
  if (bytes.length !== 32) throw new Error("k is not 256 bits");
  const key = await crypto.subtle.importKey("raw", bytes, "AES-GCM", false, [
    "wrapKey",
    "unwrapKey",
  ]);
  return { kid: jwk.kid, key };
}

// Imported once per isolate per secret value; a rotated secret arrives as a new value.
const masterKeys = new Map<string, Promise<MasterKey>>();

/** The master key. Missing or unusable is a 503: personal data is never stored unencrypted. */
export async function masterKey(env: Env): Promise<MasterKey> {
  const secret = env.PRINCIPAL_MASTER_KEY;
  if (!secret) throw new ApiError("encryption_key_unavailable");
  let pending = masterKeys.get(secret);
  if (!pending) {
    pending = importMasterKey(secret);
    masterKeys.set(secret, pending);
    pending.catch(() => masterKeys.delete(secret));
  }
  try {
    return await pending;
  } catch (cause) {
    logError("principal master key unusable");
    throw new ApiError("encryption_key_unavailable", undefined, { cause });
  }
}

function associatedData(purpose: "key" | "data", binding: PersonalDataBinding, kid?: string) {
  if (!binding.orgId || !binding.principalId) throw new Error("binding needs both ids");
  const fields = ["agent-risk/principal", VERSION, purpose, binding.orgId, binding.principalId];
  return utf8.encode(JSON.stringify(kid === undefined ? fields : [...fields, kid]));
}

function gcm(iv: Uint8Array, additionalData: Uint8Array) {
  return { name: "AES-GCM", iv, additionalData };
}

/**
 * Encrypts a principal's personal data under a data key of its own, wrapped by the master key.
 * Every call draws a new data key and new IVs: re-sealing after an update leaves nothing that
 * the previous wrapped key could open.
 */
export async function sealPersonalData(
  master: MasterKey,
  binding: PersonalDataBinding,
  data: Record<string, unknown>,
): Promise<Sealed> {
  // Extractable only so that wrapKey can read it; it leaves this function wrapped or not at all.
  const dataKey = (await crypto.subtle.generateKey({ name: "AES-GCM", length: 256 }, true, [
    "encrypt",
  ])) as CryptoKey;
  const dataIv = crypto.getRandomValues(new Uint8Array(IV_BYTES));
  const plaintext = utf8.encode(JSON.stringify(data));
  const ciphertext = await crypto.subtle.encrypt(
    gcm(dataIv, associatedData("data", binding)),
    dataKey,
    plaintext,
  );
  const keyIv = crypto.getRandomValues(new Uint8Array(IV_BYTES));
  const wrapped = await crypto.subtle.wrapKey(
    "raw",
    dataKey,
    master.key,
    gcm(keyIv, associatedData("key", binding, master.kid)),
  );
  return {
    wrappedKey: [VERSION, master.kid, base64url(keyIv), base64url(new Uint8Array(wrapped))].join(
      ".",
    ),
    ciphertext: [VERSION, base64url(dataIv), base64url(new Uint8Array(ciphertext))].join("."),
  };
}

function fields(encoded: string, count: number, what: string): string[] {
  const parts = encoded.split(".");
  if (parts.length !== count || parts[0] !== VERSION) throw new Error(`${what} is not ${VERSION}`);
  return parts.slice(1);
}

async function openSealed(master: MasterKey, binding: PersonalDataBinding, sealed: Sealed) {
  const [kid, keyIv, wrapped] = fields(sealed.wrappedKey, 4, "wrappedKey") as [
    string,
    string,
    string,
  ];
  if (kid !== master.kid) throw new Error(`wrapped under master key ${kid}, not ${master.kid}`);
  const dataKey = await crypto.subtle.unwrapKey(
    "raw",
    fromBase64url(wrapped),
    master.key,
    gcm(fromBase64url(keyIv), associatedData("key", binding, kid)),
    "AES-GCM",
    false,
    ["decrypt"],
  );
  const [iv, ciphertext] = fields(sealed.ciphertext, 3, "ciphertext") as [string, string];
  const plaintext = await crypto.subtle.decrypt(
    gcm(fromBase64url(iv), associatedData("data", binding)),
    dataKey,
    fromBase64url(ciphertext),
  );
  const data: unknown = JSON.parse(
    new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(plaintext),
  );
  if (!isRecord(data)) throw new Error("sealed data is not an object");
  return data;
}

/**
 * Decrypts what sealPersonalData sealed for the same binding. Anything else (another row's
 * binding, a changed byte, another master key) is an internal error carrying its cause: the
 * database's content is the service's own, so a failure here is never the caller's to fix,
 * and no unauthenticated bytes are ever returned.
 */
export async function openPersonalData(
  master: MasterKey,
  binding: PersonalDataBinding,
  sealed: Sealed,
): Promise<Record<string, unknown>> {
  try {
    return await openSealed(master, binding, sealed);
  } catch (cause) {
    throw new ApiError("internal_error", undefined, { cause });
  }
}
