/**
 * Every page of the console, as the accessibility and load tests visit it: the route pattern of
 * console/src/routes.ts it exercises, the hash path to open (with the seeded org's real ids) and
 * what shows that its data is on the screen. A page added to routes.ts without a line here fails
 * `console-accessibility.test.ts` ("covers every route"), so no page goes unchecked.
 *
 * "Loaded" is deterministic, not a sleep (`dataShown`): the page's `<h1>` (and `h1` text, when
 * given) and its `selector` are there, no `/v1/` call of the page is in flight, nothing is
 * marked `aria-busy="true"`, and no placeholder (an element reading only "…" or "Loading…") is left, and all of this has
 * held for `STABLE_MS` (a call a rendered answer starts next comes within a frame or two: a
 * single check between two chained calls would see a page half loaded). The time reported is
 * when the streak began, so the hold itself is not counted.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Page } from "playwright-core";
import type { Seeded } from "./seed-load";
import { REPO } from "./service";

export interface ConsolePage {
  /** The pattern of console/src/routes.ts this visit exercises. */
  route: string;
  /** A name for the report and the screenshot. */
  name: string;
  /** The hash path (after `#/`). */
  path: (seeded: Seeded) => string;
  /** A CSS selector present once the page's data is shown. */
  selector: string;
  /** The `<h1>`'s text once loaded, when it depends on the data. */
  h1?: (seeded: Seeded) => string;
}

const ROW = "main table tbody tr";

export const CONSOLE_PAGES: ConsolePage[] = [
  { route: "", name: "overview", path: () => "", selector: "main .chart canvas" },
  { route: "assessments", name: "assessments", path: () => "assessments", selector: ROW },
  {
    route: "assessments/:id",
    name: "assessment",
    path: (s) => `assessments/${s.assessments.review}`,
    selector: "main dl.facts",
  },
  { route: "reviews", name: "reviews", path: () => "reviews", selector: ROW },
  { route: "audit", name: "audit", path: () => "audit", selector: "main table" },
  { route: "policies", name: "policies", path: () => "policies", selector: ROW },
  {
    route: "policies/:id",
    name: "policy",
    path: (s) => `policies/${s.policyId}`,
    selector: "main dl.facts",
    h1: () => "Seeded rules",
  },
  {
    route: "policies/:id",
    name: "policy-new",
    path: () => "policies/new",
    selector: "main form",
  },
  { route: "agents", name: "agents", path: () => "agents", selector: ROW },
  {
    route: "agents/:id",
    name: "agent",
    path: (s) => `agents/${s.agentId}`,
    selector: "main .chart canvas",
    h1: () => "Shopping agent",
  },
  { route: "webhooks", name: "webhooks", path: () => "webhooks", selector: ROW },
  {
    route: "network",
    name: "network",
    path: () => "network",
    selector: 'main [aria-labelledby="network-settings"]',
  },
  { route: "api-keys", name: "api-keys", path: () => "api-keys", selector: ROW },
  { route: "billing", name: "billing", path: () => "billing", selector: "main dl.facts" },
  { route: "models", name: "models", path: () => "models", selector: ROW },
  {
    route: "models/:id",
    name: "model",
    path: (s) => `models/${s.modelId}`,
    selector: "main dl.facts",
  },
  { route: "retro-study", name: "retro-study", path: () => "retro-study", selector: ROW },
];

/** The route patterns of console/src/routes.ts, read from its source (one `"pattern": Page,` a line). */
export function consoleRoutePatterns(): string[] {
  const source = readFileSync(join(REPO, "console/src/routes.ts"), "utf8");
  const body = /export const routes[^=]*=\s*\{([\s\S]*?)\n\};/.exec(source)?.[1];
  if (!body) throw new Error("console/src/routes.ts: no `export const routes = { … };`");
  return [...body.matchAll(/^\s*(?:"([^"]*)"|([\w-]+))\s*:/gm)].map((m) => m[1] ?? m[2] ?? "");
}

/** How long the page must stay settled before it counts as loaded. */
export const STABLE_MS = 150;

/**
 * Counts the page's `/v1/` calls in flight (`__v1InFlight`): installed with `addInitScript`,
 * which runs through the DevTools protocol before the page's own script, so the console's
 * Content-Security-Policy (no inline script) is untouched and the client sees the wrapped fetch.
 */
export async function countApiCalls(page: Page): Promise<void> {
  await page.addInitScript(`(() => {
    const original = globalThis.fetch;
    globalThis.__v1InFlight = 0;
    globalThis.fetch = function (input, init) {
      const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
      const api = new URL(url, location.href).pathname.startsWith("/v1/");
      if (!api) return original.call(this, input, init);
      globalThis.__v1InFlight += 1;
      const done = () => { globalThis.__v1InFlight -= 1; };
      const answer = original.call(this, input, init);
      // Counted until the body is read too: the client reads it right after the headers.
      return answer.then(
        (response) => {
          const clone = response.clone();
          clone.arrayBuffer().then(done, done);
          return response;
        },
        (error) => { done(); throw error; },
      );
    };
  })()`);
}

/**
 * Marks the page on the screen as left, before a navigation inside the app (a hash change):
 * its heading no longer counts, so `dataShown` waits for the next page's own. The shell keys
 * each page by its path, so the next page's heading is a new element.
 */
export async function leaving(page: Page): Promise<void> {
  await page.evaluate(`(() => {
    const heading = document.querySelector("main h1");
    if (heading) heading.dataset.left = "1";
    globalThis.__settledSince = undefined;
  })()`);
}

/**
 * Waits until `target`'s data is shown (see the header) and answers the `performance.now()` of
 * the moment it first was: milliseconds since the document's navigation began.
 */
export async function dataShown(page: Page, target: ConsolePage, seeded: Seeded): Promise<number> {
  // A function, not a string: a string predicate is run with eval, which the CSP refuses.
  const handle = await page.waitForFunction(settledSince, {
    h1: target.h1?.(seeded) ?? null,
    selector: target.selector,
    stableMs: STABLE_MS,
  });
  const since = (await handle.jsonValue()) as number;
  await handle.dispose();
  return since;
}

/**
 * Page code (these tests compile without the DOM's types, hence the loose ones): false while
 * the page is not settled or not for long enough, else the `performance.now()` it settled at.
 */
function settledSince({
  h1,
  selector,
  stableMs,
}: {
  h1: string | null;
  selector: string;
  stableMs: number;
}): number | false {
  const page = globalThis as any;
  const document = page.document;
  const settled = (() => {
    const main = document.querySelector("main");
    const heading = main?.querySelector("h1");
    if (!heading || heading.dataset.left) return false;
    if (h1 !== null && heading.textContent.trim() !== h1) return false;
    if (!document.querySelector(selector)) return false;
    if ((page.__v1InFlight ?? 0) > 0) return false;
    if (document.querySelector('[aria-busy="true"]')) return false;
    // A placeholder is an element holding only "…" or "Loading…" (not a prefix shown as "ab…").
    for (const element of main.querySelectorAll("*")) {
      if (element.children.length > 0) continue;
      const text = element.textContent.trim();
      if (text === "…" || text === "Loading…") return false;
    }
    return true;
  })();
  const now = page.performance.now() as number;
  if (!settled) {
    page.__settledSince = undefined;
    return false;
  }
  page.__settledSince ??= now;
  return now - page.__settledSince >= stableMs ? (page.__settledSince as number) : false;
}
