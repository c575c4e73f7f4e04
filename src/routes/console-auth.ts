/**
 * The console's sign-in (docs/console.md): plain Worker routes, outside /v1 and the OpenAPI
 * document, because a browser navigates to them rather than a client calling them.
 *
 *   GET  /console/auth/login     302 to the identity provider, the sealed sign-in in a cookie
 *   GET  /console/auth/callback  the provider's answer: session + CSRF cookies, 302 /console/
 *   POST /console/auth/logout    (x-csrf-token) clears both cookies, 204
 */
import type { OpenAPIHono } from "@hono/zod-openapi";
import { verifySession } from "../auth/session";
import { ApiError } from "../errors";
import { failure, setConsoleHeaders } from "../http/console-page";
import type { AppContext, AppEnv } from "../http/context";
import {
  CSRF_COOKIE,
  clearCookie,
  LOGIN_COOKIE,
  LOGIN_TTL_SECONDS,
  readCookie,
  SESSION_COOKIE,
  setCookie,
} from "../sign-in/cookies";
import { csrfMatches, csrfToken } from "../sign-in/csrf";
import { openLogin, sealLogin } from "../sign-in/login-cookie";
import { beginSignIn, completeSignIn, provider, SignInError } from "../sign-in/oidc";

const CONSOLE_HOME = "/console/";

function redirect(location: string, cookies: string[]): Response {
  const headers = new Headers({ location });
  for (const cookie of cookies) headers.append("set-cookie", cookie);
  return new Response(null, { status: 302, headers });
}

function refused(reason: string, message: string, providerError?: string): ApiError {
  return new ApiError("sign_in_failed", {
    reason,
    message,
    ...(providerError ? { provider_error: providerError } : {}),
  });
}

async function callback(c: AppContext): Promise<Response> {
  const login = await openLogin(c.env, readCookie(c.req.header("cookie"), LOGIN_COOKIE));
  if (!login) {
    throw refused(
      "login_expired",
      "This sign-in expired or began in another browser. Start again from the console.",
    );
  }
  const p = await provider(c.env);
  let session: { idToken: string; expiresAt: number };
  try {
    session = await completeSignIn(p, new URL(c.req.url), login);
    // The signature, against the provider's key set, as every later request will check it.
    await verifySession(session.idToken, c.env);
  } catch (error) {
    if (error instanceof SignInError) {
      throw refused(error.reason, error.message, error.providerError);
    }
    if (error instanceof ApiError && error.code === "unauthenticated") {
      throw refused("invalid_id_token", "The identity provider's ID token does not verify.");
    }
    throw error;
  }
  const maxAge = session.expiresAt - Math.floor(Date.now() / 1000);
  if (maxAge <= 0) throw refused("invalid_id_token", "The ID token has already expired.");
  return redirect(CONSOLE_HOME, [
    setCookie(SESSION_COOKIE, session.idToken, { httpOnly: true, sameSite: "Strict", maxAge }),
    setCookie(CSRF_COOKIE, await csrfToken(c.env, session.idToken), {
      httpOnly: false,
      sameSite: "Strict",
      maxAge,
    }),
    clearCookie(LOGIN_COOKIE, "Lax"),
  ]);
}

/**
 * Signing someone out is a state change too: only the console itself may ask for it. A
 * cross-site form brings no SameSite=Strict session cookie, yet the browser applies the answer's
 * Set-Cookie, so "no session, nothing to check" would let any page sign a person out. The
 * header is the proof instead: another origin cannot add one without a CORS preflight, which
 * this service never grants. With a session cookie it must be that session's token; without one
 * (it expired), any value shows the console's own script asked. A browser that says the request
 * comes from another site is refused whatever it carries.
 */
async function checkLogoutOrigin(c: AppContext): Promise<void> {
  const site = c.req.header("sec-fetch-site");
  if (site === "cross-site" || site === "same-site") {
    throw new ApiError("csrf_failed", [
      { path: "sec-fetch-site", message: "must be same-origin: only the console signs out" },
    ]);
  }
  const presented = c.req.header("x-csrf-token");
  const session = readCookie(c.req.header("cookie"), SESSION_COOKIE);
  const valid = session ? await csrfMatches(c.env, session, presented) : Boolean(presented);
  if (!valid) {
    throw new ApiError("csrf_failed", [
      { path: "x-csrf-token", message: "must be the value of the __Host-ar_csrf cookie" },
    ]);
  }
}

export function registerConsoleAuth(app: OpenAPIHono<AppEnv>) {
  app.use("/console/auth/*", async (c, next) => {
    await next();
    // The API's onError answered JSON; a browser gets a page (still `{error, details}` else).
    if (c.error instanceof ApiError) c.res = failure(c, c.error);
    setConsoleHeaders(c.res.headers);
  });

  app.get("/console/auth/login", async (c) => {
    const { login, url } = await beginSignIn(await provider(c.env));
    return redirect(url.href, [
      setCookie(LOGIN_COOKIE, await sealLogin(c.env, login), {
        httpOnly: true,
        // Lax: the cookie must come back on the provider's top-level redirect to the callback.
        sameSite: "Lax",
        maxAge: LOGIN_TTL_SECONDS,
      }),
    ]);
  });

  app.get("/console/auth/callback", callback);

  app.post("/console/auth/logout", async (c) => {
    await checkLogoutOrigin(c);
    const headers = new Headers();
    headers.append("set-cookie", clearCookie(SESSION_COOKIE));
    headers.append("set-cookie", clearCookie(CSRF_COOKIE));
    return new Response(null, { status: 204, headers });
  });
}
