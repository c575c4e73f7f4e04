/**
 * The console's cookies (docs/console.md, "Cookies"). `__Host-` names: the browser accepts them
 * only with `Secure`, `Path=/` and no `Domain`, so no subdomain and no plain-http page can set or
 * shadow them. Chromium treats http://127.0.0.1 and http://localhost as secure contexts, so
 * the same attributes work under `npm run dev`.
 */
/** The ID token: HttpOnly, SameSite=Strict; the API's session credential. */
export const SESSION_COOKIE = "__Host-ar_session";
/** The CSRF token: readable by the console's script, which echoes it in `x-csrf-token`. */
export const CSRF_COOKIE = "__Host-ar_csrf";
/** The sealed sign-in state: SameSite=Lax, because it must return on the IdP's redirect. */
export const LOGIN_COOKIE = "__Host-ar_login";

/** How long a sign-in may take at the identity provider. */
export const LOGIN_TTL_SECONDS = 600;

interface CookieOptions {
  httpOnly: boolean;
  sameSite: "Strict" | "Lax";
  maxAge: number;
}

export function setCookie(name: string, value: string, options: CookieOptions): string {
  return [
    `${name}=${value}`,
    "Path=/",
    "Secure",
    ...(options.httpOnly ? ["HttpOnly"] : []),
    `SameSite=${options.sameSite}`,
    `Max-Age=${Math.max(0, Math.floor(options.maxAge))}`,
  ].join("; ");
}

/** Removes a cookie: same name and attributes, nothing in it, expired. */
export function clearCookie(name: string, sameSite: "Strict" | "Lax" = "Strict"): string {
  return setCookie(name, "", { httpOnly: name !== CSRF_COOKIE, sameSite, maxAge: 0 });
}

/**
 * One cookie of the request's `Cookie` header, if present and non-empty: the first of that name
 * (RFC 6265 5.4 orders the longest path first; ours are all `Path=/`). Values are taken as sent:
 * the console's cookies are base64url and JWTs, with nothing to decode.
 */
export function readCookie(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const pair of header.split(";")) {
    const at = pair.indexOf("=");
    if (at < 0 || pair.slice(0, at).trim() !== name) continue;
    const value = pair
      .slice(at + 1)
      .trim()
      .replace(/^"(.*)"$/, "$1");
    return value === "" ? undefined : value;
  }
  return undefined;
}
