/**
 * The browser tests' one allowance for the dev server (support/browser.ts, `navigation`): a
 * static file or `/health` that never arrives gets the page reloaded once; anything else still
 * fails, and says which request held the page. Held here with a route that never answers.
 */
import { createServer } from "node:http";
import type { Route } from "playwright-core";
import { describe, expect, inject, it } from "vitest";
import { useBrowser } from "./support/browser";
import { getFromDevServer } from "./support/service";

const origin = inject("browserOrigin");

describe.skipIf(!origin)("a navigation in the browser tests", () => {
  const browser = useBrowser("navigation");

  /**
   * Opens `from`, holds the first request for `held` (a route pattern) unanswered, navigates to
   * `path` within `timeoutMs`, and answers how often `held` was asked and the page's status.
   */
  async function navigateHoldingFirst(from: string, held: string, path: string, timeoutMs: number) {
    const tab = await browser.open(from);
    let asked = 0;
    await tab.page.route(held, async (route) => {
      asked += 1;
      if (asked > 1) await route.continue(); // the first is held: never answered
    });
    tab.page.setDefaultNavigationTimeout(timeoutMs);
    const response = await tab.navigation(() => tab.page.goto(`${origin}${path}`));
    return { tab, asked, status: response && "status" in response ? response.status() : null };
  }

  it("reloads once when one of the service's static files never arrives", async () => {
    const { tab, asked, status } = await navigateHoldingFirst(
      "/health",
      "**/docs/reference.js",
      "/docs",
      5_000,
    );
    expect([asked, status]).toEqual([2, 200]);
    await expect(tab.page.title()).resolves.toBe("API reference · Agent Action Risk Assessment");
  });

  it("navigates again once when the page itself, GET /health, never arrives", async () => {
    const { asked, status } = await navigateHoldingFirst(
      "/docs/favicon.svg",
      "**/health",
      "/health",
      3_000,
    );
    expect([asked, status]).toEqual([2, 200]);
  });

  it("fails, naming the request, when what holds the page is not a static file", async () => {
    const tab = await browser.open("/health");
    let held: Route | undefined;
    await tab.page.route("**/v1/me", (route) => {
      held = route; // never answered
    });
    tab.page.setDefaultNavigationTimeout(3_000);
    const failed = await tab
      .navigation(() => tab.page.goto(`${origin}/v1/me`))
      .then(
        () => null,
        (error: Error) => error.message,
      );
    expect(failed).toMatch(/Timeout 3000ms exceeded/);
    expect(failed).toContain(`requests still open: GET ${origin}/v1/me (`);
    // Let it go: the tab is closed once its requests are over, and this one never would be.
    await held?.abort();
  });

  it("asks a read the dev server leaves unanswered once more, and only once", async () => {
    // A stand-in server that holds every request but the ones it is told to answer.
    let asked = 0;
    let answerFrom = 2;
    const server = createServer((_, response) => {
      asked += 1;
      if (asked >= answerFrom) response.end("ok");
    });
    await new Promise<void>((listening) => server.listen(0, "127.0.0.1", listening));
    const { port } = server.address() as { port: number };
    try {
      const response = await getFromDevServer(`http://127.0.0.1:${port}/x`, "navigation", 300);
      expect([response.status, await response.text(), asked]).toEqual([200, "ok", 2]);
      asked = 0;
      answerFrom = 3; // the second is held too: the second attempt has no allowance
      const second = getFromDevServer(`http://127.0.0.1:${port}/x`, "navigation", 300);
      const outcome = await Promise.race([
        second.then(
          () => "answered",
          () => "failed",
        ),
        new Promise((wait) => setTimeout(() => wait("still waiting"), 1_000)),
      ]);
      expect([outcome, asked]).toEqual(["still waiting", 2]);
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });
});
