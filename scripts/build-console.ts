/**
 * Builds the console (console/, Preact + uPlot) into the Worker's static assets:
 * `public/console/assets/app.js` and `app.css`, one file each, loaded by the committed
 * `public/console/index.html`. Git-ignored: `npm ci` rebuilds them (the root `prepare`
 * script), and `npm run dev` and the browser tests' setup call `ensureConsoleBuild()`, which
 * rebuilds only when a source is newer than the build. See console/README.md.
 */
import { mkdirSync, readdirSync, renameSync, statSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { ASSETS_DIR } from "./build-reference.ts";
import { REPO_ROOT } from "./dev-state.ts";

const CONSOLE_DIR = join(REPO_ROOT, "console");
export const CONSOLE_ASSETS = join(ASSETS_DIR, "console/assets");
const OUTPUTS = ["app.js", "app.css"].map((name) => join(CONSOLE_ASSETS, name));

/**
 * What the bundle is made of besides node_modules: the console and the client package it
 * imports by source (so a change to either is picked up without building the package).
 */
const SOURCES = [
  join(CONSOLE_DIR, "src"),
  join(REPO_ROOT, "packages/client/src"),
  join(REPO_ROOT, "package-lock.json"),
  fileURLToPath(import.meta.url),
];

function newestChange(path: string): number {
  const stat = statSync(path, { throwIfNoEntry: false });
  if (!stat) return 0;
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = stat.mtimeMs;
  for (const entry of readdirSync(path)) newest = Math.max(newest, newestChange(join(path, entry)));
  return newest;
}

function oldestOutput(): number {
  let oldest = Number.POSITIVE_INFINITY;
  for (const output of OUTPUTS) {
    const stat = statSync(output, { throwIfNoEntry: false });
    if (!stat) return 0;
    oldest = Math.min(oldest, stat.mtimeMs);
  }
  return oldest;
}

/** Bundles the console; the files are written beside and renamed, never half-served. */
export async function buildConsole(): Promise<void> {
  const result = await build({
    absWorkingDir: REPO_ROOT,
    entryPoints: { app: join(CONSOLE_DIR, "src/main.tsx") },
    bundle: true,
    format: "esm",
    target: "es2022",
    platform: "browser",
    minify: true,
    sourcemap: false,
    legalComments: "none",
    jsx: "automatic",
    jsxImportSource: "preact",
    tsconfig: join(CONSOLE_DIR, "tsconfig.json"),
    // The client by its source, as the tests import it: never a stale packages/client/dist.
    alias: { "@agent-risk/client": join(REPO_ROOT, "packages/client/src/index.ts") },
    outdir: CONSOLE_ASSETS,
    write: false,
    logLevel: "warning",
  });
  mkdirSync(CONSOLE_ASSETS, { recursive: true });
  for (const file of result.outputFiles) {
    const temporary = `${file.path}.${process.pid}.tmp`;
    writeFileSync(temporary, file.contents);
    renameSync(temporary, file.path);
  }
  const missing = OUTPUTS.filter((output) => !result.outputFiles.some((f) => f.path === output));
  if (missing.length > 0) throw new Error(`console build did not write ${missing.join(", ")}`);
}

/** Builds unless every output is newer than every source; returns whether it built. */
export async function ensureConsoleBuild(): Promise<boolean> {
  const newest = Math.max(...SOURCES.map(newestChange));
  if (oldestOutput() > newest) return false;
  await buildConsole();
  return true;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  let built = true;
  if (process.argv.includes("--force")) await buildConsole();
  else built = await ensureConsoleBuild();
  const where = relative(process.cwd(), CONSOLE_ASSETS) || CONSOLE_ASSETS;
  console.log(`console: ${where}/ ${built ? "built" : "up to date"}`);
}
