/**
 * The API as the console's tests reach it besides the page: calls from the signed-in page's
 * script (the session cookie and its CSRF header, as the console sends them), and calls from
 * Node with an API key (an integration running assessments). docs/console.md.
 */
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Cookie } from "playwright-core";
import { expect, inject } from "vitest";
import type { BrowserTab, OpenOptions } from "./browser";
import { csrfToken, signIn } from "./console";
import { REPO } from "./service";

export interface Answer {
  status: number;
  body: any;
}

/** A same-origin call from the page, with the session's CSRF header. */
export async function fromPage(
  tab: BrowserTab,
  path: string,
  init: { method?: string; body?: unknown; mode?: "live" | "test" } = {},
): Promise<Answer> {
  const csrf = await csrfToken(tab);
  return tab.page.evaluate(
    async ({ path, method, body, csrf, mode }) => {
      const headers: Record<string, string> = { "x-csrf-token": csrf, "x-mode": mode };
      if (body !== undefined) headers["content-type"] = "application/json";
      const response = await fetch(path, {
        method,
        credentials: "same-origin",
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await response.text();
      return { status: response.status, body: text ? JSON.parse(text) : null };
    },
    { path, method: init.method ?? "GET", body: init.body, csrf, mode: init.mode ?? "live" },
  );
}

/** Each user's session cookies from their first sign-in in this test file (`openSignedIn`). */
const sessions = new Map<string, Cookie[]>();

/**
 * Opens a tab signed in as `user` on the console, its shell drawn. A user's first tab signs in
 * through the identity provider, starting on /health, not the console, so a signed-out
 * console's 401 is not among its problems. Later tabs of the same user start with the session
 * cookies that sign-in set, as a browser kept from one visit to the next would: the session is
 * the ID token itself, valid until it expires, and the sign-in is the same each time (2-4 s of
 * a test on this machine, paid once instead of in every test).
 */
export async function openSignedIn(
  browser: { open(path: string, options?: OpenOptions): Promise<BrowserTab> },
  user: string,
  options: { viewport?: { width: number; height: number } } = {},
): Promise<BrowserTab> {
  const nav = (tab: BrowserTab) => tab.page.getByRole("navigation", { name: "Console" });
  const cookies = sessions.get(user);
  if (cookies) {
    const tab = await browser.open("/console/", { ...options, cookies });
    await nav(tab).waitFor();
    return tab;
  }
  const tab = await browser.open("/health", options);
  await signIn(tab, user);
  await nav(tab).waitFor();
  sessions.set(user, await tab.page.context().cookies(inject("browserOrigin") ?? undefined));
  return tab;
}

/** Creates an API key with the page's session; answers its plaintext. */
export async function createKey(tab: BrowserTab, mode: "live" | "test" = "live"): Promise<string> {
  const answer = await fromPage(tab, "/v1/api-keys", {
    method: "POST",
    body: { name: `console test ${mode}`, mode, scopes: ["assess:write", "assess:read"] },
  });
  expect(answer.status).toBe(201);
  return answer.body.key as string;
}

const PAYMENT = JSON.parse(
  readFileSync(join(REPO, "test/fixtures/ap2/payment_mandate.json"), "utf8"),
) as Record<string, unknown>;

/**
 * POST /v1/assess from Node with `key`: an AP2 payment mandate of its own (a new transaction
 * id). No agent is named, so the decision is `review` and a review item opens (docs/reviews.md).
 */
export async function assessFromNode(
  key: string,
): Promise<{ assessmentId: string; decision: string }> {
  const origin = inject("browserOrigin");
  const response = await fetch(`${origin}/v1/assess`, {
    method: "POST",
    headers: { "x-api-key": key, "content-type": "application/json" },
    body: JSON.stringify({ mandate: { ...PAYMENT, transaction_id: `tx-${randomUUID()}` } }),
  });
  const body = (await response.json()) as { assessmentId: string; decision: string };
  expect(response.status, JSON.stringify(body)).toBe(200);
  return body;
}

/** The console's short form of an id, as its tables show it (console/src/format.ts). */
export function shortId(id: string): string {
  return id.length > 13 ? `${id.slice(0, 8)}…${id.slice(-4)}` : id;
}

/** A user name of its own for a test, so each run's organizations are new. */
export function newUser(name: string): string {
  return `${name}-${Date.now().toString(36)}${Math.floor(Math.random() * 1296).toString(36)}`;
}
