import type { Env } from "../env";
import { ApiError } from "../errors";
import { isUuid } from "../lib/ids";
import { hashApiKey, isWellFormedApiKey, looksLikeApiKey } from "./api-key";
import { verifySession } from "./session";

/** What the request presented, checked as far as it can be without the database. */
export type Credential =
  /** `livemode` read from the key's prefix (`aar_live_`/`aar_test_`), which its mode matches. */
  | { kind: "api_key"; hash: string; livemode: boolean }
  | { kind: "session"; subject: string; email: string | null; orgId: string | null };

const BEARER = /^Bearer\s+(\S+)\s*$/i;

/**
 * Reads the credential from `x-api-key` or `Authorization: Bearer`. A malformed key or an
 * invalid session token is rejected here (401) without a database round trip.
 */
export async function readCredential(
  header: (name: string) => string | undefined,
  env: Env,
): Promise<Credential> {
  const apiKey = header("x-api-key");
  const bearer = header("authorization")?.match(BEARER)?.[1];
  const value = apiKey ?? bearer;
  if (!value) throw new ApiError("unauthenticated");

  if (apiKey !== undefined || looksLikeApiKey(value)) {
    if (!isWellFormedApiKey(value)) throw new ApiError("unauthenticated");
    return {
      kind: "api_key",
      hash: hashApiKey(value),
      livemode: value.startsWith("aar_live_"),
    };
  }

  const identity = await verifySession(value, env);
  const orgId = header("x-org-id") ?? null;
  if (orgId !== null && !isUuid(orgId)) {
    throw new ApiError("invalid_request", [{ path: "x-org-id", message: "must be a uuid" }]);
  }
  return { kind: "session", ...identity, orgId };
}
