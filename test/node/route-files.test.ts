import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

// A reader finds a route by its URL: the file that defines it is named after the path's
// segments (parameters dropped, joined by "-"), or after a leading part of them when the route
// is a sub-path of a resource that keeps its sub-paths together (/v1/audit/{id}/proof is in
// audit.ts). docs/architecture.md lists every route with its file; this keeps both true.

const ROOT = join(import.meta.dirname, "../..");
const ROUTES = join(ROOT, "src/routes");

function routes(): { route: string; file: string }[] {
  const found: { route: string; file: string }[] = [];
  for (const file of readdirSync(ROUTES).filter((f) => f.endsWith(".ts"))) {
    const text = readFileSync(join(ROUTES, file), "utf8");
    for (const m of text.matchAll(/method: "(\w+)",\s*\n\s*path: "([^"]+)"/g)) {
      found.push({ route: `${m[1]?.toUpperCase()} ${m[2]}`, file });
    }
  }
  return found.sort((a, b) => (a.route < b.route ? -1 : a.route > b.route ? 1 : 0));
}

/**
 * The file names a path may live in: its segments without parameters, each leading run; `/`,
 * which has none, lives in root.ts.
 */
function namesFor(path: string): string[] {
  if (path === "/") return ["root.ts"];
  const segments = path
    .split("/")
    .filter((s) => s !== "" && s !== "v1" && !s.startsWith("{"))
    .map((s) => s.replace(/^\./, "").replace(/\.json$/, ""))
    .filter((s) => s !== "well-known");
  return segments.map((_, i) => `${segments.slice(0, i + 1).join("-")}.ts`);
}

describe("route files", () => {
  it("finds routes to check", () => {
    expect(routes().length).toBeGreaterThan(70);
  });

  it("names every route's file after its URL", () => {
    const misplaced = routes().filter(({ route, file }) => {
      const path = route.split(" ")[1] as string;
      return !namesFor(path).includes(file);
    });
    expect(misplaced).toEqual([]);
  });

  it("lists every route with its file in docs/architecture.md", () => {
    const doc = readFileSync(join(ROOT, "docs/architecture.md"), "utf8");
    const table = [...doc.matchAll(/^\| `([A-Z]+ [^`]+)` \| `routes\/([^`]+)` \|$/gm)].map((m) => ({
      route: m[1] as string,
      file: m[2] as string,
    }));
    expect(table).toEqual(routes());
  });

  // Routes parse, authorize, call the domain and shape the answer: a table, a transaction or a
  // ledger record in a route file is domain logic in the wrong place (docs/architecture.md, "One
  // home for each transactional idiom"). A change is recorded through `commit` in a domain module.
  it("keeps tables, transactions and ledger records out of route files", () => {
    const forbidden = [
      /from "\.\.\/db\/(schema|tables)(\/[^"]*)?"/,
      /from "\.\.\/db\/client"/,
      /\.batch\(/,
      /\.transaction\(/,
      /\b(publicBatch|orgBatchOf)\(/,
      // `z.record(` is a schema, not a ledger record.
      /(?<!\.)\brecord(As|Deferred|Once|OnceAs|Revocation)?\(/,
      /\bcommit\(/,
    ];
    const offending = readdirSync(ROUTES)
      .filter((f) => f.endsWith(".ts"))
      .flatMap((file) => {
        const text = readFileSync(join(ROUTES, file), "utf8");
        return forbidden.filter((re) => re.test(text)).map((re) => `${file}: ${re.source}`);
      });
    expect(offending).toEqual([]);
  });
});
