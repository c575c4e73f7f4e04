/**
 * The console's CSRF defence, a signed double submit (docs/console.md, "CSRF"): the token is
 * base64url(HMAC-SHA-256(k, session token)), set beside the session as the readable
 * `__Host-ar_csrf` cookie. The console copies it into `x-csrf-token`; another site can make the
 * browser send the session cookie (SameSite=Strict already stops most of that) but can neither
 * read the csrf cookie nor compute the token without the server's key, and a custom header on a
 * cross-origin request needs a CORS preflight this service never grants.
 */

import { base64url, utf8 } from "#audit/encoding";
import type { Env } from "../env";
import { consoleKeys } from "./keys";

/** The CSRF token bound to one session token. */
export async function csrfToken(env: Env, session: string): Promise<string> {
  const { csrf } = await consoleKeys(env);
  return base64url(new Uint8Array(await crypto.subtle.sign("HMAC", csrf, utf8(session))));
}

/** Whether `presented` is the token of `session`, compared in constant time. */
export async function csrfMatches(
  env: Env,
  session: string,
  presented: string | undefined,
): Promise<boolean> {
  if (presented === undefined) return false;
  const expected = await csrfToken(env, session);
  if (presented.length !== expected.length) return false;
  let difference = 0;
  for (let i = 0; i < expected.length; i++) {
    difference |= expected.charCodeAt(i) ^ presented.charCodeAt(i);
  }
  return difference === 0;
}
