/**
 * Headless Chromium for a test file, watching everything a page does wrong: console errors,
 * uncaught exceptions, failed requests, error statuses, and any request to another origin than
 * the service's and its local identity provider's (blocked, so a page that needs one fails here
 * as it would offline). docs/browser-tests.md.
 *
 *   const origin = inject("browserOrigin");
 *   describe.skipIf(!origin)("the page", () => {
 *     const browser = useBrowser("page");
 *     it("…", async () => {
 *       const tab = await browser.open("/docs");
 *       …
 *       await tab.screenshot("docs");
 *       expect(await tab.problems()).toEqual([]);
 *     });
 *   });
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import {
  type Browser,
  type BrowserContext,
  type Cookie,
  chromium,
  errors,
  type Page,
  type Request,
  type Response,
} from "playwright-core";
import { afterAll, afterEach, beforeAll, inject } from "vitest";
import { CHROMIUM_PATH, expectedChromiumMajor } from "./chromium";
import { RESULTS_DIR } from "./service";

export const SCREENSHOTS_DIR = join(RESULTS_DIR, "screenshots");

/** How long a page may keep the network busy before `problems()` stops waiting for it. */
const IDLE_TIMEOUT_MS = 10_000;
/**
 * Navigations and waits for an element. A page loads in about 3 s here; the margin is for a CI
 * machine busy with the rest of `npm test` (the renderer alone is 3.5 MB of script to parse).
 */
const PAGE_TIMEOUT_MS = 45_000;

export interface BrowserTab {
  page: Page;
  /** The answer to the navigation `open` made. */
  response: Response | null;
  /**
   * Runs a navigation (`page.goto`, `page.waitForURL` after a click) and answers what it does.
   * `wrangler dev` now and then answers one request tens of seconds late with nothing else
   * wrong (`GET /docs/reference.js 200 OK (44447ms)`, `GET /health 200 OK (47644ms)` in
   * service.log): when a navigation times out and the only requests still open are the
   * service's own static files or `/health`, the page is reloaded once (navigated to again
   * when what never arrived is the page itself). A timeout with anything else open (an API
   * call, the identity provider) fails, naming the requests.
   */
  navigation<T>(navigate: () => Promise<T>): Promise<T | Response | null>;
  /**
   * Everything that went wrong in the tab so far, once the network is idle: an empty list is a
   * clean page. A test that provokes an error on purpose filters out the lines it expects.
   */
  problems(): Promise<string[]>;
  /** Saves the viewport as `.browser-results/screenshots/<suite>/<name>.png`; returns the path. */
  screenshot(name: string): Promise<string>;
}

export interface OpenOptions {
  /** Default 1280×800, the console's desktop size (390×844 is its phone size). */
  viewport?: { width: number; height: number };
  /** Cookies the context starts with (a session an earlier sign-in made: console-api.ts). */
  cookies?: Cookie[];
}

/**
 * What a stalled navigation may ask for again: a file the asset layer serves, or `GET /health`
 * (every test's first page, with no side effect); not the Worker's API, not the console's
 * sign-in routes, whose slowness a test must see.
 */
function isSafeToAskAgain(url: string, origin: string): boolean {
  if (!url.startsWith(`${origin}/`)) return false;
  const path = new URL(url).pathname;
  return !path.startsWith("/v1/") && !path.startsWith("/console/auth/");
}

/** The page a request belongs to; none for a service worker's. */
function pageOf(request: Request): Page | null {
  try {
    return request.frame().page();
  } catch {
    return null;
  }
}

/**
 * Whether `response` is a new document of a page's main frame: a navigation's final answer
 * (not a redirect, and not a 204, which leaves the page as it was).
 */
function replacesDocument(response: Response): boolean {
  const request = response.request();
  const status = response.status();
  if (!request.isNavigationRequest() || status === 204 || (status >= 300 && status < 400)) {
    return false;
  }
  try {
    return request.frame().parentFrame() === null;
  } catch {
    return false;
  }
}

/** How long a finished test waits for its tabs' requests still in flight before closing them. */
const SETTLE_MS = 5_000;

/** Resolves once no request is in flight, or after `ms`. */
async function settled(pending: Map<Request, number>, ms: number): Promise<void> {
  const until = Date.now() + ms;
  while (pending.size > 0 && Date.now() < until) {
    await new Promise((tick) => setTimeout(tick, 50));
  }
}

/** Launches Chromium before the file's tests, closes each test's tabs after it, and itself last. */
export function useBrowser(suite: string) {
  let browser: Browser | undefined;
  const tabs: { context: BrowserContext; pending: Map<Request, number> }[] = [];

  beforeAll(async () => {
    browser = await chromium.launch({ executablePath: CHROMIUM_PATH });
    const major = browser.version().split(".")[0];
    if (major !== expectedChromiumMajor()) {
      process.stderr.write(
        `[browser] Chromium ${browser.version()} at ${CHROMIUM_PATH}; playwright-core expects ` +
          `${expectedChromiumMajor()}: pin the playwright-core release that matches it.\n`,
      );
    }
  });
  afterEach(async () => {
    for (const { context, pending } of tabs.splice(0)) {
      // A tab closed while the dev server still writes a response breaks its pipe, and after
      // that `wrangler dev` has left the next request unanswered for 45 s and more (service.log:
      // "Broken pipe", then `GET /health 200 OK (47644ms)`): let what is in flight arrive first.
      await settled(pending, SETTLE_MS);
      await context.close();
    }
  });
  afterAll(async () => {
    await browser?.close();
  });

  return {
    /** Opens `path` of the running service in a fresh context (no cookies, no storage). */
    async open(path: string, options: OpenOptions = {}): Promise<BrowserTab> {
      const origin = inject("browserOrigin");
      if (!browser || !origin) throw new Error("useBrowser: no browser or no service running");
      const context = await browser.newContext({
        viewport: options.viewport ?? { width: 1280, height: 800 },
      });
      if (options.cookies) await context.addCookies(options.cookies);
      context.setDefaultTimeout(PAGE_TIMEOUT_MS);
      context.setDefaultNavigationTimeout(PAGE_TIMEOUT_MS);
      const problems: string[] = [];
      // The service is the Worker and, for the console's sign-in, its local identity provider.
      const own = [origin, inject("browserIdpOrigin")].filter((o): o is string => Boolean(o));
      await context.route("**/*", (route) => {
        const url = route.request().url();
        if (own.some((o) => url.startsWith(`${o}/`) || url === o)) return route.continue();
        problems.push(`request to another origin (blocked): ${url}`);
        return route.abort("blockedbyclient");
      });
      context.on("console", (message) => {
        if (message.type() === "error" || message.type() === "assert") {
          problems.push(`console.${message.type()}: ${message.text()}`);
        }
      });
      context.on("weberror", (error) => problems.push(`uncaught: ${error.error().message}`));
      context.on("requestfailed", (request) => {
        const reason = request.failure()?.errorText ?? "failed";
        // Requests to other origins were counted when they were blocked.
        if (reason !== "net::ERR_BLOCKED_BY_CLIENT") {
          problems.push(`request failed (${reason}): ${request.method()} ${request.url()}`);
        }
      });
      // Requests started and not yet finished: what "still busy" is waiting for.
      const pending = new Map<Request, number>();
      tabs.push({ context, pending });
      context.on("request", (request) => pending.set(request, Date.now()));
      context.on("requestfinished", (request) => pending.delete(request));
      context.on("requestfailed", (request) => pending.delete(request));
      context.on("response", (response) => {
        if (response.status() >= 400) {
          problems.push(
            `HTTP ${response.status()}: ${response.request().method()} ${response.url()}`,
          );
        }
        if (replacesDocument(response)) {
          // The old document's requests still open are dropped by the browser without a
          // `requestfailed` (a reload, a `goto` mid-load): they would never leave `pending`,
          // and waiting for them held such a test's close for SETTLE_MS. Nothing of the new
          // document can have started before its own response arrived.
          const page = pageOf(response.request());
          for (const open of pending.keys()) {
            if (open !== response.request() && pageOf(open) === page) pending.delete(open);
          }
        }
      });

      const page = await context.newPage();
      const busy = () => {
        const now = Date.now();
        return [...pending].map(
          ([r, since]) => `${r.method()} ${r.url()} (${Math.round((now - since) / 1000)} s)`,
        );
      };
      const navigation = async <T>(navigate: () => Promise<T>): Promise<T | Response | null> => {
        try {
          return await navigate();
        } catch (error) {
          const requests = [...pending.keys()];
          const onlySafeReads =
            requests.length > 0 &&
            requests.every((r) => r.method() === "GET" && isSafeToAskAgain(r.url(), origin));
          if (!(error instanceof errors.TimeoutError) || !onlySafeReads) {
            const open = busy().join(", ") || "none";
            throw new Error(`${(error as Error).message}\nrequests still open: ${open}`, {
              cause: error,
            });
          }
          // A stalled document never committed: there is no page to reload, so the navigation
          // itself is run again. A stalled file of a page that did commit reloads that page.
          const again = requests.some((r) => r.isNavigationRequest());
          process.stderr.write(
            `[browser] ${suite}: ${busy().join(", ")} never arrived from the dev server; ` +
              `${again ? "navigating again" : "reloading the page"} once\n`,
          );
          if (!again) return page.reload();
          // The held navigation is replaced first: a second one to the same address would
          // otherwise be aborted along with it.
          await page.goto("about:blank", { timeout: 5_000 }).catch(() => {});
          return navigate();
        }
      };
      const response = await navigation(() => page.goto(`${origin}${path}`));
      return {
        page,
        response,
        navigation,
        async problems() {
          await page.waitForLoadState("networkidle", { timeout: IDLE_TIMEOUT_MS }).catch(() => {
            problems.push(
              `the network was still busy after ${IDLE_TIMEOUT_MS} ms: ${busy().join(", ") || "?"}`,
            );
          });
          return [...problems];
        },
        async screenshot(name: string) {
          const dir = join(SCREENSHOTS_DIR, suite);
          mkdirSync(dir, { recursive: true });
          const file = join(dir, `${name}.png`);
          await page.screenshot({ path: file });
          return file;
        },
      };
    },
  };
}
