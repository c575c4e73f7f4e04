import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { dirname, join, normalize } from "node:path";
import { describe, expect, it } from "vitest";

// What `npm pack` publishes, built as `npm ci` builds it (the root `prepare` step).

const PACKAGE = join(import.meta.dirname, "..");

function build() {
  execFileSync("npm", ["run", "-s", "build"], { cwd: PACKAGE, stdio: "pipe" });
}

function packedFiles(): string[] {
  const out = execFileSync("npm", ["pack", "--dry-run", "--json", "--ignore-scripts"], {
    cwd: PACKAGE,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
  });
  const [pack] = JSON.parse(out) as [{ files: { path: string }[] }];
  return pack.files.map((f) => f.path).sort();
}

/** Every module the entry reaches through relative imports, as built. */
function reachable(entry: string, seen = new Set<string>()): Set<string> {
  if (seen.has(entry)) return seen;
  seen.add(entry);
  const text = readFileSync(entry, "utf8");
  for (const [, spec] of text.matchAll(/(?:import|export)[^;]*?from\s*"(\.[^"]+)"/g)) {
    reachable(normalize(join(dirname(entry), spec as string)), seen);
  }
  return seen;
}

describe("the published package", () => {
  build();

  it("holds dist/ with its types, the README, the license and nothing else", () => {
    const files = packedFiles();
    expect(files).toContain("package.json");
    expect(files).toContain("README.md");
    expect(files).toContain("LICENSE");
    for (const entry of [
      "dist/index.js",
      "dist/index.d.ts",
      "dist/audit/index.js",
      "dist/audit/index.d.ts",
    ]) {
      expect(files).toContain(entry);
    }
    const outside = files.filter(
      (f) => !f.startsWith("dist/") && !["package.json", "README.md", "LICENSE"].includes(f),
    );
    expect(outside).toEqual([]);
    expect(files.filter((f) => f.startsWith("dist/")).every((f) => /\.(js|d\.ts)$/.test(f))).toBe(
      true,
    );
  });

  it("keeps node: modules out of the main entry, which browsers and Workers load", () => {
    const modules = [...reachable(join(PACKAGE, "dist/index.js"))];
    expect(modules.length).toBeGreaterThan(5);
    const withNode = modules.filter((m) => /from\s*"node:/.test(readFileSync(m, "utf8")));
    expect(withNode).toEqual([]);
  });

  it("loads in Node as a consumer imports it, by name", async () => {
    const out = execFileSync(
      process.execPath,
      [
        "--input-type=module",
        "-e",
        'const m = await import("@agent-risk/client"); const a = await import("@agent-risk/client/audit"); console.log(typeof m.createClient, typeof m.verifyRiskPayload, typeof m.verifyWebhook, typeof a.verifyAuditExport)',
      ],
      { cwd: PACKAGE, encoding: "utf8" },
    );
    expect(out.trim()).toBe("function function function function");
  });
});
