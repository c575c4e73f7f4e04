import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { cycles, folderGraph } from "../../scripts/folder-graph";

// Imports point one way (docs/architecture.md, "Layout"): the HTTP layer (routes/, http/,
// app.ts) reaches the domain, never the reverse, so domain functions run without a request.

const SRC = join(import.meta.dirname, "../../src");

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? files(path) : path.endsWith(".ts") ? [path] : [];
  });
}

const HTTP_LAYER = /^(routes\/|http\/|app\.ts$)/;

function importsOf(path: string): string[] {
  const text = readFileSync(path, "utf8");
  return [...text.matchAll(/^(?:import|export)[^;]*? from "([^"]+)";/gms)].map((m) => m[1] ?? "");
}

describe("layers", () => {
  const domain = files(SRC)
    .map((path) => ({ path, name: relative(SRC, path) }))
    .filter(({ name }) => !HTTP_LAYER.test(name));

  it("keeps Hono out of the domain (errors.ts extends its HTTPException)", () => {
    const offending = domain.flatMap(({ path, name }) =>
      importsOf(path)
        .filter((from) => from === "hono" || from.startsWith("hono/"))
        .filter(() => name !== "errors.ts")
        .map((from) => `${name} imports ${from}`),
    );
    expect(offending).toEqual([]);
  });

  it("keeps the HTTP layer's modules out of the domain", () => {
    const offending = domain.flatMap(({ path, name }) =>
      importsOf(path)
        .filter((from) => /(^|\/)(routes|http)\//.test(from) || from.endsWith("/app"))
        .map((from) => `${name} imports ${from}`),
    );
    expect(offending).toEqual([]);
  });
});

// The layer order (docs/architecture.md, "Layers"), on value imports: a folder imports only
// from its own layer or below, and the domain folders, one layer, import each other without a
// cycle. `import type` does not count: it vanishes at build time.
const LAYER: Record<string, number> = {
  lib: 0,
  "env.ts": 0,
  "errors.ts": 0,
  schemas: 1,
  db: 2,
  http: 4,
  routes: 5,
  "app.ts": 6,
};
const DOMAIN = 3;

describe("layers, on value imports", () => {
  const graph = folderGraph();
  const layerOf = (folder: string) => LAYER[folder] ?? DOMAIN;

  it("point down: lib ← schemas ← db ← domain ← http ← routes ← app", () => {
    const upward = [...graph].flatMap(([from, arrows]) =>
      [...arrows.keys()].filter((to) => layerOf(to) > layerOf(from)).map((to) => `${from} → ${to}`),
    );
    expect(upward).toEqual([]);
  });

  it("make no cycle between folders", () => {
    expect(cycles(graph)).toEqual([]);
  });
});
