/**
 * The browser project's setup: one running service for every browser test file, or none (and
 * every browser test skipped, loudly) on a machine without Chromium. Under CI the missing
 * browser is an error instead: CI always runs these tests (docs/browser-tests.md).
 */
import type { TestProject } from "vitest/node";
import { ensureConsoleBuild } from "../../../scripts/build-console";
import { ensureReferenceBundle } from "../../../scripts/build-reference";
import {
  browserTestsRequired,
  CHROMIUM_INSTALL,
  CHROMIUM_PATH,
  chromiumInstalled,
} from "./chromium";
import { startService } from "./service";

declare module "vitest" {
  export interface ProvidedContext {
    /** The running service's origin, or null when the browser tests are skipped. */
    browserOrigin: string | null;
    /** Its DEV_STATE_DIR (for `npm run token`), or null when skipped. */
    browserStateDir: string | null;
    /** Its local identity provider's origin (the console signs in there), or null. */
    browserIdpOrigin: string | null;
    /** Its SQL-over-HTTP endpoint (support/seed-load.ts seeds through it), or null. */
    browserSqlEndpoint: string | null;
  }
}

function banner(lines: string[]): string {
  const rule = "#".repeat(78);
  return ["", rule, ...lines.map((line) => `# ${line}`), rule, ""].join("\n");
}

export default async function setup(project: TestProject) {
  if (!chromiumInstalled()) {
    const required = browserTestsRequired();
    const lines = [
      `BROWSER TESTS ${required ? "CANNOT RUN" : "SKIPPED"}: no Chromium at ${CHROMIUM_PATH}.`,
      `Install Debian's package to run them:  ${CHROMIUM_INSTALL}`,
      "(or set CHROMIUM_PATH to a Chromium of the version playwright-core expects).",
    ];
    if (required) throw new Error(banner([...lines, "CI=true: the browser tests must run."]));
    process.stderr.write(`${banner(lines)}\n`);
    project.provide("browserOrigin", null);
    project.provide("browserStateDir", null);
    project.provide("browserIdpOrigin", null);
    project.provide("browserSqlEndpoint", null);
    return;
  }
  // `npm ci` built it; a node_modules changed since must not be served stale.
  ensureReferenceBundle();
  await ensureConsoleBuild();
  const service = await startService();
  project.provide("browserOrigin", service.origin);
  project.provide("browserStateDir", service.stateDir);
  project.provide("browserIdpOrigin", service.identityProvider);
  project.provide("browserSqlEndpoint", service.sqlEndpoint);
  return () => service.stop();
}
