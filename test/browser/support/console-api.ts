/**
 * The public API as a signed-in console tab calls it: from the page, with its session cookie
 * and the CSRF header the console sends (docs/console.md). The console tests set up what a page
 * shows this way (a key, a policy, an agent), through the same routes as any user.
 */
import { expect, inject } from "vitest";
import type { BrowserTab, OpenOptions, useBrowser } from "./browser";
import { signIn } from "./console";

export interface Answer {
  status: number;
  body: any;
}

/** A call with the tab's session; throws unless the status is `expected` (default 2xx). */
export async function asSession(
  tab: BrowserTab,
  method: string,
  path: string,
  body?: unknown,
  expected?: number,
): Promise<Answer> {
  const answer = await tab.page.evaluate(
    async ({ method, path, body }) => {
      const csrf = document.cookie
        .split(";")
        .map((part) => part.trim())
        .find((part) => part.startsWith("__Host-ar_csrf="))
        ?.slice("__Host-ar_csrf=".length);
      const response = await fetch(path, {
        method,
        credentials: "same-origin",
        headers: {
          ...(body === undefined ? {} : { "content-type": "application/json" }),
          ...(csrf ? { "x-csrf-token": decodeURIComponent(csrf) } : {}),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: response.status, body: await response.json().catch(() => null) };
    },
    { method, path, body },
  );
  if (expected !== undefined) expect(answer.status, JSON.stringify(answer.body)).toBe(expected);
  else if (answer.status >= 300) {
    throw new Error(`${method} ${path}: ${answer.status} ${JSON.stringify(answer.body)}`);
  }
  return answer;
}

/** A call with an API key, from the test (Node), as an integration makes it. */
export async function withKey(
  key: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<Answer> {
  const origin = inject("browserOrigin");
  const response = await fetch(`${origin}${path}`, {
    method,
    headers: {
      "x-api-key": key,
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, body: await response.json().catch(() => null) };
}

/** A live key of the signed-in org holding `scopes`, created through the API. */
export async function liveKey(tab: BrowserTab, scopes: string[]): Promise<string> {
  const { body } = await asSession(tab, "POST", "/v1/api-keys", {
    name: "console test",
    mode: "live",
    scopes,
  });
  return body.key as string;
}

/** A user name of its own for each test, so that each signs in to a fresh organization. */
export function newUser(prefix: string): string {
  return `${prefix}-${crypto.randomUUID().slice(0, 8)}`;
}

/** A failure a test provokes or expects: its status, method and path. */
export interface Expected {
  status: number;
  method: string;
  path: string;
}

/**
 * The page's problems without the lines of the failures expected, each taken once: the HTTP
 * status line and the console line Chromium logs for the same request. Anything else stays.
 */
export function unexpected(problems: string[], expected: Expected[]): string[] {
  const origin = inject("browserOrigin");
  const left = [...problems];
  const take = (line: string) => {
    const at = left.indexOf(line);
    if (at === -1) return false;
    left.splice(at, 1);
    return true;
  };
  for (const { status, method, path } of expected) {
    expect(take(`HTTP ${status}: ${method} ${origin}${path}`), `${method} ${path} ${status}`).toBe(
      true,
    );
    // Chromium logs a failed fetch to the console too (the URL is not in the text).
    const console = left.find((line) =>
      line.startsWith(
        `console.error: Failed to load resource: the server responded with a status of ${status}`,
      ),
    );
    if (console) take(console);
  }
  return left;
}

/**
 * Signs a new user in and waits for the console's shell: on a first sign-in the console
 * creates the organization (GET /v1/me answers 403 `no_organization`, then POST /v1/orgs), so
 * the API is ready for the org once the navigation shows.
 */
export async function signInFresh(tab: BrowserTab, user: string): Promise<void> {
  await signIn(tab, user);
  await tab.page.getByRole("navigation", { name: "Console" }).waitFor();
}

/** The failure every first sign-in makes on purpose (see signInFresh). */
export const FIRST_SIGN_IN: Expected = { status: 403, method: "GET", path: "/v1/me" };

/**
 * A fresh tab with a new user signed in. It starts at `/health`, not the console: a console
 * opened signed out asks `GET /v1/me` first, a 401 each test would then have to expect.
 */
export async function openSignedIn(
  browser: ReturnType<typeof useBrowser>,
  prefix: string,
  options: OpenOptions = {},
): Promise<BrowserTab> {
  const tab = await browser.open("/health", options);
  await signInFresh(tab, newUser(prefix));
  return tab;
}
