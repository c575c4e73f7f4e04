/**
 * What the console's pages B tests (policies, agents, webhooks, API keys, billing) add to
 * console-api.ts: API calls that fail the test unless they succeed, a live key with chosen
 * scopes, and the failures a test expects among a tab's problems. Set-up goes through the
 * public API as any user's would: from the signed-in page (its session cookie and the CSRF
 * header the console sends, docs/console.md) or from Node with an API key.
 */
import { expect, inject } from "vitest";
import type { BrowserTab } from "./browser";
import { type Answer, fromPage } from "./console-api";

/** fromPage, failing the test unless the status is `expected` (default: any 2xx). */
export async function asSession(
  tab: BrowserTab,
  method: string,
  path: string,
  body?: unknown,
  expected?: number,
): Promise<Answer> {
  const answer = await fromPage(tab, path, { method, body });
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

/**
 * An agent of a new principal (an individual named `principal`), created from the signed-in
 * page; the agent as the API returned it.
 */
export async function newAgent(
  tab: BrowserTab,
  name: string,
  principal = "Ada",
): Promise<Answer["body"]> {
  const { body: owner } = await asSession(tab, "POST", "/v1/principals", {
    type: "individual",
    name: principal,
  });
  const { body: agent } = await asSession(tab, "POST", "/v1/agents", {
    principal_id: owner.id,
    name,
  });
  return agent;
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
 * The failure every first sign-in makes on purpose: the console asks GET /v1/me, which answers
 * 403 `no_organization`, and then creates the organization (POST /v1/orgs).
 */
export const FIRST_SIGN_IN: Expected = { status: 403, method: "GET", path: "/v1/me" };

/**
 * How far the page reaches past the viewport's width (0: it scrolls only vertically), and, to
 * say where to look when it does, the first elements whose box ends past it (those inside a
 * scroller included). Page code, as text: these tests compile without the DOM's types.
 */
export async function horizontalOverflow(
  tab: BrowserTab,
): Promise<{ overflow: number; wide: string[] }> {
  return (await tab.page.evaluate(`(() => {
    const root = document.documentElement;
    const wide = [...document.querySelectorAll("body *")]
      .filter((e) => e.getBoundingClientRect().right > root.clientWidth + 1)
      .slice(0, 8)
      .map((e) => e.tagName + "." + e.className + " " + Math.round(e.getBoundingClientRect().right));
    return { overflow: root.scrollWidth - root.clientWidth, wide };
  })()`)) as { overflow: number; wide: string[] };
}
