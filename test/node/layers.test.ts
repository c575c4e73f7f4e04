import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";

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
