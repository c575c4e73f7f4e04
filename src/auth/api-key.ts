import { sha256Hex } from "#audit/digest";
import { base64url } from "#audit/encoding";

export const API_KEY_MODES = ["live", "test"] as const;
export type ApiKeyMode = (typeof API_KEY_MODES)[number];

const PREFIX = "aar";
const SECRET_BYTES = 32;
// `aar_live_` or `aar_test_` then 43 base64url characters (256 bits of entropy).
const FORMAT = /^aar_(live|test)_[A-Za-z0-9_-]{43}$/;

export interface NewApiKey {
  key: string;
  hash: string;
  /** Shown in listings so people can tell keys apart; never enough to use the key. */
  prefix: string;
}

export async function generateApiKey(mode: ApiKeyMode): Promise<NewApiKey> {
  const secret = new Uint8Array(SECRET_BYTES);
  crypto.getRandomValues(secret);
  const key = `${PREFIX}_${mode}_${base64url(secret)}`;
  return {
    key,
    hash: hashApiKey(key),
    prefix: key.slice(0, `${PREFIX}_${mode}_`.length + 4),
  };
}

export function hashApiKey(key: string): string {
  return sha256Hex(key);
}

/** A cheap syntactic check that spares the database a lookup for garbage credentials. */
export function isWellFormedApiKey(value: string): boolean {
  return FORMAT.test(value);
}

/** Bearer values with the service's key prefix are API keys; anything else is a session JWT. */
export function looksLikeApiKey(value: string): boolean {
  return value.startsWith(`${PREFIX}_`);
}
