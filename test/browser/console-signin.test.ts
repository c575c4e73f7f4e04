/**
 * Signing in to the console in Chromium through the local identity provider (docs/console.md):
 * the cookies the browser keeps, what the page's script may read, the API with and without the
 * CSRF header, and signing out.
 */
import { describe, expect, inject, it } from "vitest";
import { refusals } from "../../src/auth/unauthenticated";
import { useBrowser } from "./support/browser";
import { csrfToken, signIn } from "./support/console";

const origin = inject("browserOrigin");

interface ValidityFlags {
  patternMismatch: boolean;
}

/** A same-origin call from the page's script, as the console makes it. */
function fetchFromPage(
  tab: { page: import("playwright-core").Page },
  path: string,
  init: { method?: string; csrf?: string },
) {
  return tab.page.evaluate(
    async ({ path, method, csrf }) => {
      const response = await fetch(path, {
        method,
        credentials: "same-origin",
        headers: csrf ? { "x-csrf-token": csrf } : {},
      });
      const text = await response.text();
      return { status: response.status, body: text ? JSON.parse(text) : null };
    },
    { path, method: init.method ?? "GET", csrf: init.csrf },
  );
}

describe.skipIf(!origin)("console sign-in in Chromium", () => {
  const browser = useBrowser("console-signin");

  it("signs in through the local identity provider and lands on /console/ with its cookies", async () => {
    const tab = await browser.open("/console/");
    const user = `ada-${Date.now().toString(36)}`;
    await signIn(tab, user);
    expect(tab.page.url()).toBe(`${origin}/console/`);

    // Chromium kept the Secure, __Host- cookies on http://127.0.0.1 (a potentially trustworthy
    // origin): the session is HttpOnly and Strict, the CSRF token readable.
    const cookies = await tab.page.context().cookies(origin as string);
    const byName = new Map(cookies.map((c) => [c.name, c]));
    expect(byName.get("__Host-ar_session")).toMatchObject({
      httpOnly: true,
      secure: true,
      sameSite: "Strict",
      path: "/",
    });
    expect(byName.get("__Host-ar_csrf")).toMatchObject({
      httpOnly: false,
      secure: true,
      sameSite: "Strict",
      path: "/",
    });
    expect(byName.has("__Host-ar_login")).toBe(false);
    const visible = await tab.page.evaluate(
      () => (globalThis as unknown as { document: { cookie: string } }).document.cookie,
    );
    expect(visible).toMatch(/__Host-ar_csrf=[\w-]{43}/);
    expect(visible).not.toContain("__Host-ar_session");

    const csrf = await csrfToken(tab);
    const org = await fetchFromPage(tab, "/v1/orgs", { method: "POST", csrf });
    // 201 for the org this test makes; 200 when the console's app made it first.
    expect([200, 201]).toContain(org.status);
    const me = await fetchFromPage(tab, "/v1/me", { csrf });
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({
      orgId: org.body.id,
      actor: { type: "user", subject: `local|${user}`, email: `${user}@example.test` },
      livemode: true,
    });
    const withoutHeader = await fetchFromPage(tab, "/v1/me", {});
    expect(withoutHeader).toEqual({
      status: 403,
      body: expect.objectContaining({ error: "csrf_failed" }),
    });
    await tab.screenshot("signed-in");
    // The one refusal asked for while signed in (Chromium logs each refused fetch as a console
    // error too).
    const refusedWithoutHeader = [
      `HTTP 403: GET ${origin}/v1/me`,
      "console.error: Failed to load resource: the server responded with a status of 403 (Forbidden)",
    ];

    const out = await fetchFromPage(tab, "/console/auth/logout", { method: "POST", csrf });
    expect(out.status).toBe(204);
    const after = await tab.page.context().cookies(origin as string);
    expect(after.map((c) => c.name)).toEqual([]);
    const gone = await fetchFromPage(tab, "/v1/me", { csrf });
    const { reason, message } = refusals.missing;
    expect(gone).toEqual({
      status: 401,
      body: {
        error: "unauthenticated",
        message,
        details: { reason },
        doc_url: `${origin}/docs#description/unauthenticated`,
      },
    });

    // Besides it, only 401s: the one asked for after signing out, the console's own first
    // `/v1/me` when it loaded before the sign-in, and whatever its dashboard still had in flight
    // when the session ended. Nothing else may have gone wrong.
    const unauthenticated = (p: string) =>
      /^HTTP 401: GET /.test(p) ||
      p ===
        "console.error: Failed to load resource: the server responded with a status of 401 (Unauthorized)";
    const unexpected = (await tab.problems()).filter(
      (p) => !refusedWithoutHeader.includes(p) && !unauthenticated(p),
    );
    expect(unexpected).toEqual([]);
  });

  it("shows the identity provider's page with a labelled field, and refuses a bad user name", async () => {
    const tab = await browser.open("/console/auth/login");
    expect(new URL(tab.page.url()).origin).toBe(inject("browserIdpOrigin"));
    const field = tab.page.getByLabel("User name");
    await field.fill("not a name");
    await tab.page.getByRole("button", { name: "Sign in" }).click();
    // The browser's own validation (pattern) keeps the form from being sent.
    expect(
      await field.evaluate(
        (input) => (input as unknown as { validity: ValidityFlags }).validity.patternMismatch,
      ),
    ).toBe(true);
    expect(new URL(tab.page.url()).origin).toBe(inject("browserIdpOrigin"));
    await tab.screenshot("identity-provider");
    expect(await tab.problems()).toEqual([]);
  });
});
