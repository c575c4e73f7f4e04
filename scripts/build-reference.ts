/**
 * Puts the API reference's renderer where the Worker's static assets are served from: Scalar's
 * standalone browser bundle, copied from node_modules to `public/docs/vendor/` (git-ignored:
 * 3.5 MB that `npm ci` reproduces exactly from the pinned version in package-lock.json).
 *
 * The root `prepare` script runs it, so `npm ci` builds it; `npm run dev` and the test setup
 * call `ensureReferenceBundle()` too, so a checkout whose node_modules changed since (another
 * Scalar version, a branch switch) never serves a stale or missing renderer. See docs/reference.md.
 */
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { REPO_ROOT } from "./dev-state.ts";

/** The static assets directory (`[assets] directory` in wrangler.toml). */
export const ASSETS_DIR = join(REPO_ROOT, "public");
/** Where the page loads the renderer from: `/docs/vendor/scalar-api-reference.js`. */
export const REFERENCE_BUNDLE = join(ASSETS_DIR, "docs/vendor/scalar-api-reference.js");

const PACKAGE = "@scalar/api-reference";

/** The package's standalone bundle, which its exports map does not name: found from its root. */
function sourceBundle(): string {
  const entry = createRequire(join(REPO_ROOT, "package.json")).resolve(PACKAGE);
  for (let dir = dirname(entry); dir !== dirname(dir); dir = dirname(dir)) {
    const manifest = readIfPresent(join(dir, "package.json"));
    if (manifest && JSON.parse(manifest.toString("utf8")).name === PACKAGE) {
      return join(dir, "dist/browser/standalone.js");
    }
  }
  throw new Error(`${PACKAGE} is not installed: run npm ci`);
}

function readIfPresent(path: string): Buffer | undefined {
  try {
    return readFileSync(path);
  } catch {
    return undefined;
  }
}

/**
 * Copies the bundle unless the served copy is already byte-identical; returns whether it wrote.
 * The write goes through a temporary file and a rename, so a server reading the assets
 * directory meanwhile sees the old file or the new one, never half of one.
 */
export function ensureReferenceBundle(): boolean {
  const source = readFileSync(sourceBundle());
  const served = readIfPresent(REFERENCE_BUNDLE);
  if (served?.equals(source)) return false;
  mkdirSync(dirname(REFERENCE_BUNDLE), { recursive: true });
  const temporary = `${REFERENCE_BUNDLE}.${process.pid}.tmp`;
  writeFileSync(temporary, source);
  renameSync(temporary, REFERENCE_BUNDLE);
  return true;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const wrote = ensureReferenceBundle();
  const where = relative(process.cwd(), REFERENCE_BUNDLE) || REFERENCE_BUNDLE;
  console.log(`reference: ${where} ${wrote ? "written" : "up to date"}`);
}
