import type { Env } from "../env";
import { ApiError } from "../errors";
import { isUuid } from "../lib/ids";
import { readCookie, SESSION_COOKIE } from "../sign-in/cookies";
import { csrfMatches } from "../sign-in/csrf";
import { hashApiKey, isWellFormedApiKey, looksLikeApiKey } from "./api-key";
import { verifySession } from "./session";
import { unauthenticated } from "./unauthenticated";

/** What the request presented, checked as far as it can be without the database. */
export type Credential =
  /** `livemode` read from the key's prefix (`aar_live_`/`aar_test_`), which its mode matches. */
  | { kind: "api_key"; hash: string; livemode: boolean }
  /**
   * A person: a session token as a Bearer or, from the console, the session cookie with its
   * CSRF header. `livemode` is the request's `x-mode` (live unless it says `test`).
   */
  | {
      kind: "session";
      subject: string;
      email: string | null;
      orgId: string | null;
      livemode: boolean;
    };

const BEARER = /^Bearer\s+(\S+)\s*$/i;

/**
 * The request's `x-mode` against its credential: a value other than `live` or `test`, or one
 * that contradicts an API key's own mode, is the caller's to fix (400). Called by `authorize`
 * once the request's tenant exists, so the error handler checks the credential first and a
 * revoked or unknown key is still a 401 (docs/console.md, "Test mode").
 */
export function checkRequestedMode(
  credential: Credential,
  header: (name: string) => string | undefined,
): void {
  const mode = header("x-mode");
  if (mode === undefined) return;
  if (mode !== "live" && mode !== "test") {
    throw new ApiError("invalid_request", [{ path: "x-mode", message: "must be live or test" }]);
  }
  if (credential.kind === "api_key" && (mode === "live") !== credential.livemode) {
    throw new ApiError("invalid_request", [
      {
        path: "x-mode",
        message: `contradicts the key's mode (${credential.livemode ? "live" : "test"}); an API key's mode is its own`,
      },
    ]);
  }
}

/**
 * The session token of a request with no key and no Authorization header: the console's
 * cookie, accepted only with the CSRF header derived from it (docs/console.md). A cookie alone
 * is exactly what a cross-site request can make a browser send, so it is never enough.
 */
async function cookieSession(
  header: (name: string) => string | undefined,
  env: Env,
): Promise<string> {
  const cookie = readCookie(header("cookie"), SESSION_COOKIE);
  if (!cookie) throw unauthenticated("missing");
  if (!(await csrfMatches(env, cookie, header("x-csrf-token")))) {
    throw new ApiError("csrf_failed", [
      {
        path: "x-csrf-token",
        message: "must be the value of the __Host-ar_csrf cookie set at sign-in",
      },
    ]);
  }
  return cookie;
}

/**
 * Reads the credential from `x-api-key`, `Authorization: Bearer`, or else the console's session
 * cookie (with `x-csrf-token`). A malformed key, an invalid session token or a missing CSRF
 * header is rejected here (401/403) without a database round trip. `x-mode` picks a session's
 * mode (live unless it says `test`); whether it is valid is `checkRequestedMode`'s to say.
 */
export async function readCredential(
  header: (name: string) => string | undefined,
  env: Env,
): Promise<Credential> {
  const apiKey = header("x-api-key");
  const bearer = header("authorization")?.match(BEARER)?.[1];
  const presented = apiKey ?? bearer;

  if (presented !== undefined && (apiKey !== undefined || looksLikeApiKey(presented))) {
    if (!isWellFormedApiKey(presented)) throw unauthenticated("malformed_key");
    const livemode = presented.startsWith("aar_live_");
    return { kind: "api_key", hash: hashApiKey(presented), livemode };
  }
  // An Authorization header that is not a Bearer token is no credential, and never falls back
  // to the cookie: a request names one credential.
  if (presented === undefined && header("authorization") !== undefined) {
    throw unauthenticated("not_bearer");
  }

  const token = presented ?? (await cookieSession(header, env));
  const identity = await verifySession(token, env);
  const orgId = header("x-org-id") ?? null;
  if (orgId !== null && !isUuid(orgId)) {
    throw new ApiError("invalid_request", [{ path: "x-org-id", message: "must be a uuid" }]);
  }
  return { kind: "session", ...identity, orgId, livemode: header("x-mode") !== "test" };
}
