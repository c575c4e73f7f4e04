/**
 * Which Chromium the browser tests drive: Debian's `chromium` package, never a browser that
 * Playwright downloads (playwright-core has no downloader; docs/browser-tests.md).
 */
import { accessSync, constants, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";

/** Debian's package installs it here; CHROMIUM_PATH names another (a Mac, another distribution). */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH || "/usr/bin/chromium";

/** The command that provides it, named in every message about a missing browser. */
export const CHROMIUM_INSTALL = "apt-get install chromium";

export function chromiumInstalled(): boolean {
  try {
    accessSync(CHROMIUM_PATH, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** CI must run the browser tests, never skip them (.ci/run installs the package). */
export function browserTestsRequired(): boolean {
  return process.env.CI === "true" || process.env.CI === "1";
}

/**
 * The Chromium major version this playwright-core release speaks to (its browsers.json). The
 * DevTools protocol moves with Chromium, so a Debian upgrade past it can break the driver in
 * ways that look like test failures: the tests say so first.
 */
export function expectedChromiumMajor(): string {
  const require = createRequire(import.meta.url);
  const root = dirname(require.resolve("playwright-core/package.json"));
  const { browsers } = JSON.parse(readFileSync(join(root, "browsers.json"), "utf8")) as {
    browsers: { name: string; browserVersion: string }[];
  };
  const chromium = browsers.find((b) => b.name === "chromium");
  return chromium?.browserVersion.split(".")[0] ?? "unknown";
}
