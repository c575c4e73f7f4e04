import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import packageJson from "../../package.json";
import { cspWeaknesses } from "../support/csp";
import { BASE } from "./support/api";

// The API reference is a static asset of the Worker (wrangler.toml [assets]; docs/reference.md).
// The tests' Worker is configured from the same wrangler.toml, but vitest-pool-workers' SELF
// reaches the Worker itself, not the asset layer in front of it: these read the pages through
// the ASSETS binding, which answers as the asset layer does (public/_headers applied). That the
// asset layer answers /docs before the Worker, on a running service, is
// test/browser/docs.test.ts's to show.

async function asset(path: string) {
  const response = await env.ASSETS!.fetch(`${BASE}${path}`);
  return { status: response.status, headers: response.headers, text: await response.text() };
}

/** The URLs a page loads or links to: every src and href. */
function pageUrls(html: string): string[] {
  return [...html.matchAll(/\s(?:src|href)="([^"]*)"/g)].map((m) => m[1] as string);
}

describe("GET /docs", () => {
  it("serves the reference page with a strict Content-Security-Policy", async () => {
    const res = await asset("/docs");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(cspWeaknesses(res.headers.get("content-security-policy"))).toEqual([]);
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    expect(res.headers.get("referrer-policy")).toBe("no-referrer");
    expect(res.text).toContain('<div id="reference"></div>');
  });

  it("names only paths of its own origin and runs no inline script", async () => {
    const { text } = await asset("/docs");
    expect(pageUrls(text)).toEqual([
      "/docs/favicon.svg",
      "/docs/vendor/scalar-api-reference.js",
      "/docs/reference.js",
      "/openapi.json",
    ]);
    const scripts = [...text.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)];
    expect(scripts.map(([, attributes]) => attributes?.match(/\ssrc="([^"]+)"/)?.[1])).toEqual([
      "/docs/vendor/scalar-api-reference.js",
      "/docs/reference.js",
    ]);
    expect(scripts.map(([, , body]) => body)).toEqual(["", ""]);
  });

  it("serves every file the page loads, each under the same policy", async () => {
    const files = pageUrls((await asset("/docs")).text).filter((u) => u.startsWith("/docs/"));
    expect(files).toHaveLength(3);
    for (const url of files) {
      const res = await asset(url);
      expect(res.status, url).toBe(200);
      expect(cspWeaknesses(res.headers.get("content-security-policy")), url).toEqual([]);
    }
  });

  it("serves the renderer of the pinned @scalar/api-reference, built from node_modules", async () => {
    const res = await asset("/docs/vendor/scalar-api-reference.js");
    expect(res.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    const pinned = packageJson.devDependencies["@scalar/api-reference"];
    expect(pinned).toMatch(/^\d+\.\d+\.\d+$/);
    expect(res.text.slice(0, 600)).toContain(` * @scalar/api-reference ${pinned}\n`);
  });
});
