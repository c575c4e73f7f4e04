import { createExecutionContext, env, SELF, waitOnExecutionContext } from "cloudflare:test";
import { decodeJwt } from "jose";
import { describe, expect, it } from "vitest";
import type { Env } from "../../src/env";
import { csrfToken } from "../../src/sign-in/csrf";
import worker from "../../workers/main";
import { BASE, call, callRaw, newOrg, sessionToken } from "./support/api";
import { payment } from "./support/assess";
import { errorBody, refusedBody } from "./support/errors";

// docs/console.md: the console's sign-in through the identity provider (the local one, served
// on loopback by the tests' setup), the session cookie with its CSRF header, and x-mode.

const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
  "font-src 'self'; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

/** An answer's JSON, asserted field by field. */
async function json(response: Response): Promise<any> {
  return response.json();
}

/** `name=value` of a Set-Cookie line, and its attributes lower-cased. */
function parseSetCookie(line: string) {
  const [pair = "", ...attributes] = line.split(/;\s*/);
  const at = pair.indexOf("=");
  return {
    name: pair.slice(0, at),
    value: pair.slice(at + 1),
    attributes: attributes.map((a) => a.toLowerCase()),
  };
}

function setCookies(response: Response) {
  return new Map(
    response.headers.getAll("set-cookie").map((line) => {
      const cookie = parseSetCookie(line);
      return [cookie.name, cookie] as const;
    }),
  );
}

function expectConsoleHeaders(response: Response) {
  expect(response.headers.get("content-security-policy")).toBe(CSP);
  expect(response.headers.get("x-content-type-options")).toBe("nosniff");
  expect(response.headers.get("referrer-policy")).toBe("no-referrer");
  expect(response.headers.get("cache-control")).toBe("no-store");
}

function login(headers: Record<string, string> = {}) {
  return SELF.fetch(`${BASE}/console/auth/login`, { redirect: "manual", headers });
}

/** The identity provider's answer for `user`: the callback URL it redirects the browser to. */
async function authorizeAt(authorizeUrl: string, user: string): Promise<URL> {
  const url = new URL(authorizeUrl);
  const form = new URLSearchParams(url.searchParams);
  form.set("username", user);
  const answer = await fetch(`${url.origin}${url.pathname}`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: form,
    redirect: "manual",
  });
  expect(answer.status).toBe(303);
  return new URL(answer.headers.get("location") as string);
}

/** Starts a sign-in: the provider's URL and the sealed login cookie. */
async function begin() {
  const started = await login();
  expect(started.status).toBe(302);
  const loginCookie = setCookies(started).get("__Host-ar_login");
  return {
    started,
    authorizeUrl: started.headers.get("location") as string,
    cookie: `__Host-ar_login=${loginCookie?.value}`,
  };
}

function callback(query: string, cookie: string | undefined, accept = "application/json") {
  return SELF.fetch(`${BASE}/console/auth/callback${query}`, {
    redirect: "manual",
    headers: { accept, ...(cookie ? { cookie } : {}) },
  });
}

interface ConsoleSession {
  session: string;
  csrf: string;
}

/** The whole sign-in, as a browser walks it. */
async function signIn(user = `user-${crypto.randomUUID().slice(0, 8)}`): Promise<ConsoleSession> {
  const { authorizeUrl, cookie } = await begin();
  const back = await authorizeAt(authorizeUrl, user);
  const done = await callback(back.search, cookie);
  expect(done.status, await done.clone().text()).toBe(302);
  const cookies = setCookies(done);
  return {
    session: cookies.get("__Host-ar_session")?.value as string,
    csrf: cookies.get("__Host-ar_csrf")?.value as string,
  };
}

/** A call from the console: the cookies a browser sends, the CSRF header the app adds. */
function fromConsole(
  path: string,
  who: ConsoleSession,
  options: { method?: string; body?: unknown; headers?: Record<string, string> } = {},
) {
  return callRaw(path, {
    ...options,
    headers: {
      cookie: `__Host-ar_session=${who.session}; __Host-ar_csrf=${who.csrf}`,
      "x-csrf-token": who.csrf,
      ...options.headers,
    },
  });
}

async function signedUp(): Promise<ConsoleSession & { orgId: string }> {
  const who = await signIn();
  const org = await fromConsole("/v1/orgs", who, { method: "POST" });
  expect(org.status, org.text).toBe(201);
  return { ...who, orgId: org.json.id };
}

async function fetchWith(override: Partial<Env>, path: string, init: RequestInit = {}) {
  const ctx = createExecutionContext();
  const response = await worker.fetch(
    new Request(`${BASE}${path}`, { redirect: "manual", ...init }),
    { ...env, ...override },
    ctx,
  );
  await waitOnExecutionContext(ctx);
  return response;
}

describe("GET /console/auth/login", () => {
  it("redirects to the provider's authorize endpoint with PKCE, state and nonce", async () => {
    const { started, authorizeUrl } = await begin();
    expectConsoleHeaders(started);
    const url = new URL(authorizeUrl);
    expect(`${url.origin}${url.pathname}`).toBe(`${env.IDP_ISSUER}/authorize`);
    const q = url.searchParams;
    expect(q.get("client_id")).toBe(env.IDP_AUDIENCE);
    expect(q.get("redirect_uri")).toBe(`${env.PUBLIC_BASE_URL}/console/auth/callback`);
    expect(q.get("response_type")).toBe("code");
    expect(q.get("scope")).toBe("openid email");
    expect(q.get("code_challenge_method")).toBe("S256");
    expect(q.get("code_challenge")).toMatch(/^[\w-]{43}$/);
    expect(q.get("state")).toMatch(/^[\w-]{40,}$/);
    expect(q.get("nonce")).toMatch(/^[\w-]{40,}$/);
  });

  it("keeps the sign-in's secrets in a sealed, short-lived, Lax __Host- cookie", async () => {
    const { started, authorizeUrl } = await begin();
    const cookie = setCookies(started).get("__Host-ar_login");
    expect(cookie?.attributes).toEqual([
      "path=/",
      "secure",
      "httponly",
      "samesite=lax",
      "max-age=600",
    ]);
    // Sealed: neither the state nor the nonce can be read from it.
    const q = new URL(authorizeUrl).searchParams;
    expect(cookie?.value).toMatch(/^v1\.[\w-]+\.[\w-]+$/);
    expect(cookie?.value).not.toContain(q.get("state"));
    expect(
      atob(cookie?.value.split(".")[2]?.replaceAll("-", "+").replaceAll("_", "/") ?? ""),
    ).not.toContain(q.get("nonce"));
  });

  it("answers 503 identity_provider_unavailable when the provider cannot be reached", async () => {
    const res = await fetchWith({ IDP_ISSUER: "http://127.0.0.1:9" }, "/console/auth/login");
    expect(res.status).toBe(503);
    expect(await json(res)).toEqual(errorBody("identity_provider_unavailable"));
    expectConsoleHeaders(res);
  });

  it("refuses a plain-http issuer in production (503 service_misconfigured)", async () => {
    const res = await fetchWith({ ENVIRONMENT: "production" }, "/console/auth/login");
    expect(res.status).toBe(503);
    expect(await json(res)).toEqual(errorBody("service_misconfigured", { setting: "IDP_ISSUER" }));
  });
});

describe("IDP_ISSUER and the provider's metadata", () => {
  // Discovery compares issuers as URLs (a trailing slash on a bare origin is the same issuer);
  // the session check compares them the same way, so either spelling of IDP_ISSUER signs in.
  it("signs in with IDP_ISSUER spelled with a trailing slash the ID token's iss lacks", async () => {
    const slash = { IDP_ISSUER: `${env.IDP_ISSUER}/` };
    const started = await fetchWith(slash, "/console/auth/login");
    expect(started.status).toBe(302);
    const cookie = `__Host-ar_login=${setCookies(started).get("__Host-ar_login")?.value}`;
    const back = await authorizeAt(started.headers.get("location") as string, "ada");
    const done = await fetchWith(slash, `/console/auth/callback${back.search}`, {
      headers: { cookie, accept: "application/json" },
    });
    expect(done.status, await done.clone().text()).toBe(302);
    const session = setCookies(done).get("__Host-ar_session")?.value as string;
    expect(decodeJwt(session).iss).toBe(env.IDP_ISSUER);
  });

  it("accepts a Bearer session whose iss adds the slash, and no other issuer", async () => {
    const slashed = await sessionToken({}, { issuer: `${env.IDP_ISSUER}/` });
    const made = await call("/v1/orgs", { method: "POST", token: slashed });
    expect(made.status, made.text).toBe(201);
    for (const issuer of ["http://127.0.0.1:9", `${env.IDP_ISSUER}/other`]) {
      const other = await sessionToken({}, { issuer });
      const res = await call("/v1/orgs", { method: "POST", token: other });
      expect(res.status).toBe(401);
      expect(res.error).toEqual(refusedBody("unknown_session"));
    }
  });

  it("answers 503 when discovery names an authorization_endpoint that is no URL", async () => {
    const issuer = `${env.TEST_FIXTURE_URL}/docs/idp-${crypto.randomUUID()}`;
    const put = await fetch(`${issuer}/.well-known/openid-configuration`, {
      method: "PUT",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        issuer,
        authorization_endpoint: "not a url",
        token_endpoint: `${issuer}/token`,
        jwks_uri: `${issuer}/jwks.json`,
      }),
    });
    expect(put.status).toBe(204);
    const res = await fetchWith({ IDP_ISSUER: issuer }, "/console/auth/login");
    expect(res.status).toBe(503);
    expect(await json(res)).toEqual(errorBody("identity_provider_unavailable"));
    expectConsoleHeaders(res);
  });
});

describe("GET /console/auth/callback", () => {
  it("sets the ID token as the HttpOnly session and its CSRF token, and goes to /console/", async () => {
    const { authorizeUrl, cookie } = await begin();
    const back = await authorizeAt(authorizeUrl, "ada");
    expect(`${back.origin}${back.pathname}`).toBe(`${env.PUBLIC_BASE_URL}/console/auth/callback`);
    const done = await callback(back.search, cookie);
    expect(done.status).toBe(302);
    expect(done.headers.get("location")).toBe("/console/");
    expectConsoleHeaders(done);
    const cookies = setCookies(done);
    const session = cookies.get("__Host-ar_session");
    const csrf = cookies.get("__Host-ar_csrf");
    const claims = decodeJwt(session?.value as string);
    expect(claims).toMatchObject({
      iss: env.IDP_ISSUER,
      aud: env.IDP_AUDIENCE,
      sub: "local|ada",
      email: "ada@example.test",
    });
    const maxAge = Number(session?.attributes.at(-1)?.replace("max-age=", ""));
    expect(Math.abs(maxAge - ((claims.exp as number) - Date.now() / 1000))).toBeLessThan(5);
    expect(session?.attributes).toEqual([
      "path=/",
      "secure",
      "httponly",
      "samesite=strict",
      `max-age=${maxAge}`,
    ]);
    // Readable by the console's script: no HttpOnly.
    expect(csrf?.value).toMatch(/^[\w-]{43}$/);
    expect(csrf?.attributes).toEqual(["path=/", "secure", "samesite=strict", `max-age=${maxAge}`]);
    expect(cookies.get("__Host-ar_login")).toEqual({
      name: "__Host-ar_login",
      value: "",
      attributes: ["path=/", "secure", "httponly", "samesite=lax", "max-age=0"],
    });
  });

  it("refuses an answer without the sign-in's cookie (400 login_expired)", async () => {
    const { authorizeUrl } = await begin();
    const back = await authorizeAt(authorizeUrl, "ada");
    const res = await callback(back.search, undefined);
    expect(res.status).toBe(400);
    expect(await json(res)).toEqual(
      errorBody("sign_in_failed", {
        reason: "login_expired",
        message: "This sign-in expired or began in another browser. Start again from the console.",
      }),
    );
  });

  it("refuses a forged login cookie (400 login_expired)", async () => {
    const { authorizeUrl, cookie } = await begin();
    const back = await authorizeAt(authorizeUrl, "ada");
    const forged = `${cookie.slice(0, -4)}AAAA`;
    const res = await callback(back.search, forged);
    expect(res.status).toBe(400);
    expect((await json(res)).details.reason).toBe("login_expired");
  });

  it("refuses another sign-in's state (400 state_mismatch), one started elsewhere", async () => {
    const mine = await begin();
    const theirs = await begin();
    const back = await authorizeAt(theirs.authorizeUrl, "mallory");
    const res = await callback(back.search, mine.cookie);
    expect(res.status).toBe(400);
    expect((await json(res)).details).toEqual({
      reason: "state_mismatch",
      message: "the answer does not belong to this sign-in",
    });
  });

  it("refuses the provider's error answer (400 provider_error, with its code)", async () => {
    const { authorizeUrl, cookie } = await begin();
    const state = new URL(authorizeUrl).searchParams.get("state");
    const res = await callback(
      `?error=access_denied&error_description=The+user+cancelled&state=${state}`,
      cookie,
    );
    expect(res.status).toBe(400);
    expect(await json(res)).toEqual(
      errorBody("sign_in_failed", {
        reason: "provider_error",
        message: "The user cancelled",
        provider_error: "access_denied",
      }),
    );
  });

  it("refuses a code used twice (400 exchange_failed: invalid_grant)", async () => {
    const { authorizeUrl, cookie } = await begin();
    const back = await authorizeAt(authorizeUrl, "ada");
    expect((await callback(back.search, cookie)).status).toBe(302);
    const again = await callback(back.search, cookie);
    expect(again.status).toBe(400);
    expect((await json(again)).details).toEqual({
      reason: "exchange_failed",
      message: "unknown, used or expired code",
      provider_error: "invalid_grant",
    });
  });

  it("shows a browser a page, under the console's policy, that offers to start again", async () => {
    const res = await callback("?code=x&state=y", undefined, "text/html,application/xhtml+xml");
    expect(res.status).toBe(400);
    expect(res.headers.get("content-type")).toBe("text/html; charset=UTF-8");
    expectConsoleHeaders(res);
    const html = await res.text();
    expect(html).toContain("<h1>Sign-in failed</h1>");
    expect(html).toContain("This sign-in expired or began in another browser.");
    expect(html).toContain('<a href="/console/auth/login">Sign in again</a>');
    expect(html).not.toMatch(/<script|<style| style=/);
  });

  it("answers 503 when the provider cannot be reached at the callback", async () => {
    const { authorizeUrl, cookie } = await begin();
    const back = await authorizeAt(authorizeUrl, "ada");
    // The metadata is cached per issuer: an issuer nobody answers for fails at discovery.
    const res = await fetchWith(
      { IDP_ISSUER: "http://127.0.0.1:9" },
      `/console/auth/callback${back.search}`,
      {
        headers: { cookie },
      },
    );
    expect(res.status).toBe(503);
    expect(await json(res)).toEqual(errorBody("identity_provider_unavailable"));
  });
});

describe("the session cookie as an API credential", () => {
  it("needs the CSRF header: none or a wrong one is 403 csrf_failed, the right one passes", async () => {
    const who = await signedUp();
    const cookie = `__Host-ar_session=${who.session}; __Host-ar_csrf=${who.csrf}`;
    const missing = await call("/v1/me", { headers: { cookie } });
    expect(missing.status).toBe(403);
    expect(missing.json).toEqual(
      errorBody("csrf_failed", [
        {
          path: "x-csrf-token",
          message: "must be the value of the __Host-ar_csrf cookie set at sign-in",
        },
      ]),
    );
    const other = await signIn();
    // One character changed, to one it cannot already be (a fixed "A" would equal it 1 time in 16).
    const oneOff = `${who.csrf.startsWith("A") ? "B" : "A"}${who.csrf.slice(1)}`;
    for (const wrong of [other.csrf, oneOff, ""]) {
      const res = await call("/v1/me", { headers: { cookie, "x-csrf-token": wrong } });
      expect(res.status).toBe(403);
      expect(res.error.error).toBe("csrf_failed");
    }
    const me = await fromConsole("/v1/me", who);
    expect(me.status).toBe(200);
    expect(me.json).toMatchObject({
      orgId: who.orgId,
      actor: { type: "user", email: expect.stringMatching(/@example\.test$/), role: "owner" },
      livemode: true,
    });
  });

  it("needs the CSRF header on a write too", async () => {
    const who = await signedUp();
    const body = { name: "ci", scopes: ["assess:read"] };
    const cookie = `__Host-ar_session=${who.session}`;
    const refused = await call("/v1/api-keys", { method: "POST", body, headers: { cookie } });
    expect(refused.status).toBe(403);
    expect(refused.error.error).toBe("csrf_failed");
    const created = await fromConsole("/v1/api-keys", who, { method: "POST", body });
    expect(created.status, created.text).toBe(201);
    expect(created.json.key).toMatch(/^aar_live_/);
  });

  it("first sign-in: 403 no_organization until POST /v1/orgs", async () => {
    const who = await signIn();
    const me = await fromConsole("/v1/me", who);
    expect(me.status).toBe(403);
    expect(me.error).toEqual(errorBody("no_organization"));
  });

  it("is 401 without a cookie, and 401 for a session that no longer verifies", async () => {
    const none = await call("/v1/me", { headers: { "x-csrf-token": "x" } });
    expect(none.status).toBe(401);
    expect(none.error).toEqual(refusedBody("missing"));
    const expired = await sessionToken({}, { expiresIn: "-1m" });
    const stale = await fromConsole("/v1/me", {
      session: expired,
      csrf: await csrfToken(env, expired),
    });
    expect(stale.status).toBe(401);
    expect(stale.error).toEqual(refusedBody("expired_session"));
  });

  it("binds the CSRF token to its session: another session's value fails the check", async () => {
    const who = await signIn();
    // One character of the signature changed, always to another one (a fixed "AA" suffix was
    // the token itself once in 256 runs: an Ed25519 signature's last character is A, Q, g or w).
    const at = who.session.length - 10;
    const changed = who.session[at] === "A" ? "B" : "A";
    const altered = `${who.session.slice(0, at)}${changed}${who.session.slice(at + 1)}`;
    expect(altered).not.toBe(who.session);
    const forged = { session: altered, csrf: who.csrf };
    expect((await fromConsole("/v1/me", forged)).json.error).toBe("csrf_failed");
  });

  it("is ignored beside an API key or a Bearer token: the request names one credential", async () => {
    const who = await signedUp();
    const other = await newOrg();
    const { key } = await other.key(["assess:read"]);
    const cookie = `__Host-ar_session=${who.session}`;
    const byKey = await call("/v1/me", { key, headers: { cookie } });
    expect(byKey.status).toBe(200);
    expect(byKey.json.orgId).toBe(other.id);
    const byToken = await call("/v1/me", { token: other.token, headers: { cookie } });
    expect(byToken.json.orgId).toBe(other.id);
    const notBearer = await call("/v1/me", { headers: { cookie, authorization: "Basic eA==" } });
    expect(notBearer.status).toBe(401);
  });

  it("keeps other tenants' records at 404", async () => {
    const mine = await signedUp();
    const theirs = await signedUp();
    const made = await fromConsole("/v1/assess", theirs, {
      method: "POST",
      body: { mandate: payment() },
    });
    expect(made.status, made.text).toBe(200);
    const id = made.json.outcome.id;
    expect((await fromConsole(`/v1/assessments/${id}`, theirs)).status).toBe(200);
    const res = await fromConsole(`/v1/assessments/${id}`, mine);
    expect(res.status).toBe(404);
    expect(res.error).toEqual(errorBody("not_found"));
    // Naming the other org is no way in either.
    const named = await fromConsole("/v1/me", mine, { headers: { "x-org-id": theirs.orgId } });
    expect(named.status).toBe(403);
    expect(named.error).toEqual(errorBody("no_organization"));
  });

  it("is never offered to another origin: no CORS headers, preflight or not", async () => {
    const who = await signedUp();
    const preflight = await SELF.fetch(`${BASE}/v1/me`, {
      method: "OPTIONS",
      headers: {
        origin: "https://evil.example",
        "access-control-request-method": "GET",
        "access-control-request-headers": "x-csrf-token",
      },
    });
    const read = await fromConsole("/v1/me", who, { headers: { origin: "https://evil.example" } });
    for (const headers of [preflight.headers, read.headers]) {
      expect([...headers.keys()].filter((k) => k.startsWith("access-control-"))).toEqual([]);
    }
  });
});

describe("x-mode", () => {
  it("lets a session work in test mode: what it makes there is not seen in live", async () => {
    const who = await signedUp();
    const test = { "x-mode": "test" };
    const me = await fromConsole("/v1/me", who, { headers: test });
    expect(me.json.livemode).toBe(false);
    const made = await fromConsole("/v1/assess", who, {
      method: "POST",
      body: { mandate: payment() },
      headers: test,
    });
    expect(made.status, made.text).toBe(200);
    expect(made.json.outcome.livemode).toBe(false);
    const id = made.json.outcome.id;

    const inTest = await fromConsole("/v1/assessments", who, { headers: test });
    expect(inTest.json.data.map((a: { id: string }) => a.id)).toEqual([id]);
    const inLive = await fromConsole("/v1/assessments", who);
    expect(inLive.json.data).toEqual([]);
    const explicitLive = await fromConsole("/v1/assessments", who, {
      headers: { "x-mode": "live" },
    });
    expect(explicitLive.json.data).toEqual([]);
  });

  it("applies to a Bearer session as well", async () => {
    const org = await newOrg();
    const me = await call("/v1/me", { token: org.token, headers: { "x-mode": "test" } });
    expect(me.status).toBe(200);
    expect(me.json.livemode).toBe(false);
  });

  it("lets a session in test mode change shared configuration (it is a person, not a test key)", async () => {
    const who = await signedUp();
    const res = await fromConsole("/v1/billing/spending_cap", who, {
      method: "POST",
      body: { amount: 5000 },
      headers: { "x-mode": "test" },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.json.spending_cap.amount).toBe(5000);
  });

  it("refuses a value other than live or test (400)", async () => {
    const who = await signedUp();
    const res = await fromConsole("/v1/me", who, { headers: { "x-mode": "staging" } });
    expect(res.status).toBe(400);
    expect(res.json).toEqual(
      errorBody("invalid_request", [{ path: "x-mode", message: "must be live or test" }]),
    );
  });

  it("may repeat an API key's mode, never contradict it (400)", async () => {
    const org = await newOrg();
    const live = await org.key(["assess:read"], "live");
    const test = await org.key(["assess:read"], "test");
    expect((await call("/v1/me", { key: live.key, headers: { "x-mode": "live" } })).status).toBe(
      200,
    );
    const same = await call("/v1/me", { key: test.key, headers: { "x-mode": "test" } });
    expect(same.json.livemode).toBe(false);
    for (const [key, mode] of [
      [live.key, "test"],
      [test.key, "live"],
    ] as const) {
      const res = await call("/v1/me", { key, headers: { "x-mode": mode } });
      expect(res.status).toBe(400);
      expect(res.error.error).toBe("invalid_request");
      expect(res.error.details[0].path).toBe("x-mode");
    }
  });

  it("is checked after the credential: no credential is still 401", async () => {
    const res = await call("/v1/me", { headers: { "x-mode": "staging" } });
    expect(res.status).toBe(401);
  });

  it("is checked after the key too: a revoked or unknown key is 401 whatever it says", async () => {
    const org = await newOrg();
    const revoked = await org.key(["assess:read"], "live");
    const done = await call(`/v1/api-keys/${revoked.id}/revoke`, {
      method: "POST",
      token: org.token,
    });
    expect(done.status, done.text).toBe(200);
    const unknown = `aar_live_${"A".repeat(43)}`;
    for (const key of [revoked.key, unknown]) {
      for (const mode of ["test", "staging"]) {
        const res = await call("/v1/me", { key, headers: { "x-mode": mode } });
        expect(res.status, `${mode}: ${res.text}`).toBe(401);
        expect(res.error).toEqual(refusedBody("unknown_key"));
      }
    }
  });

  it("is checked after the caller: a person with no org is 403 no_organization first", async () => {
    const who = await signIn();
    const res = await fromConsole("/v1/me", who, { headers: { "x-mode": "staging" } });
    expect(res.status).toBe(403);
    expect(res.error).toEqual(errorBody("no_organization"));
  });
});

describe("POST /console/auth/logout", () => {
  it("needs the CSRF header, then clears both cookies (204)", async () => {
    const who = await signIn();
    const cookie = `__Host-ar_session=${who.session}; __Host-ar_csrf=${who.csrf}`;
    const refused = await SELF.fetch(`${BASE}/console/auth/logout`, {
      method: "POST",
      headers: { cookie },
    });
    expect(refused.status).toBe(403);
    expect((await json(refused)).error).toBe("csrf_failed");
    expect(refused.headers.getAll("set-cookie")).toEqual([]);

    const out = await SELF.fetch(`${BASE}/console/auth/logout`, {
      method: "POST",
      headers: { cookie, "x-csrf-token": who.csrf },
    });
    expect(out.status).toBe(204);
    expectConsoleHeaders(out);
    const cleared = setCookies(out);
    expect(cleared.get("__Host-ar_session")).toEqual({
      name: "__Host-ar_session",
      value: "",
      attributes: ["path=/", "secure", "httponly", "samesite=strict", "max-age=0"],
    });
    expect(cleared.get("__Host-ar_csrf")).toEqual({
      name: "__Host-ar_csrf",
      value: "",
      attributes: ["path=/", "secure", "samesite=strict", "max-age=0"],
    });
  });
});

describe("POST /console/auth/logout from another site", () => {
  const logout = (headers: Record<string, string>) =>
    SELF.fetch(`${BASE}/console/auth/logout`, { method: "POST", headers });

  // A cross-site form brings no SameSite=Strict cookie, yet the browser would apply the answer's
  // Set-Cookie: without a session to check, the header is what proves the console asked.
  it("refuses a request without x-csrf-token even when no session cookie arrives (403)", async () => {
    const requests: Record<string, string>[] = [
      {},
      { "x-csrf-token": "" },
      { "content-type": "text/plain" },
    ];
    for (const headers of requests) {
      const res = await logout(headers);
      expect(res.status).toBe(403);
      expect(await json(res)).toEqual(
        errorBody("csrf_failed", [
          { path: "x-csrf-token", message: "must be the value of the __Host-ar_csrf cookie" },
        ]),
      );
      expect(res.headers.getAll("set-cookie")).toEqual([]);
      expectConsoleHeaders(res);
    }
  });

  it("refuses a request the browser marks as from another site, header or not (403)", async () => {
    const who = await signIn();
    const cookie = `__Host-ar_session=${who.session}; __Host-ar_csrf=${who.csrf}`;
    for (const site of ["cross-site", "same-site"]) {
      const requests: Record<string, string>[] = [
        { "sec-fetch-site": site },
        { "sec-fetch-site": site, "x-csrf-token": "x" },
        { "sec-fetch-site": site, cookie, "x-csrf-token": who.csrf },
      ];
      for (const headers of requests) {
        const res = await logout(headers);
        expect(res.status).toBe(403);
        expect(await json(res)).toEqual(
          errorBody("csrf_failed", [
            { path: "sec-fetch-site", message: "must be same-origin: only the console signs out" },
          ]),
        );
        expect(res.headers.getAll("set-cookie")).toEqual([]);
      }
    }
  });

  it("still signs out the console's own request once the session cookie is gone (204)", async () => {
    const res = await logout({ "sec-fetch-site": "same-origin", "x-csrf-token": "expired" });
    expect(res.status).toBe(204);
    expect([...setCookies(res).keys()]).toEqual(["__Host-ar_session", "__Host-ar_csrf"]);
  });
});

describe("Bearer sessions", () => {
  it("work as before, with no CSRF header", async () => {
    const token = await sessionToken();
    const res = await call("/v1/orgs", { method: "POST", token });
    expect(res.status).toBe(201);
  });
});

describe("a missing file under /console/", () => {
  it("is the JSON 404 with the console's security headers", async () => {
    for (const path of ["/console/nope.js", "/console/assets/missing.css", "/console/auth/nope"]) {
      const res = await SELF.fetch(`${BASE}${path}`);
      expect(res.status, path).toBe(404);
      expect(await res.json()).toEqual(errorBody("route_not_found"));
      expectConsoleHeaders(res);
    }
  });

  it("leaves the API's 404 as it was: no console policy outside /console/", async () => {
    const res = await SELF.fetch(`${BASE}/v1/nope`);
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual(errorBody("route_not_found"));
    expect(res.headers.get("content-security-policy")).toBeNull();
  });
});
