import { SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { BASE, callRaw } from "./support/api";
import { errorBody } from "./support/errors";

// docs/api.md, "Errors": a path the service serves, asked with another method, is 405
// `method_not_allowed` with `Allow`; HEAD is answered wherever GET is.

const METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"];
const ID = "0190b7d2-8c5e-7c4a-9d3e-1f2a3b4c5d6e";

interface Template {
  path: string;
  pattern: RegExp;
  methods: string[];
}

/** The document's paths, each with the methods it lists and a pattern its concrete paths match. */
async function documentPaths(): Promise<Template[]> {
  const res = await callRaw("/openapi.json");
  expect(res.status).toBe(200);
  return Object.entries<Record<string, unknown>>(res.json.paths).map(([path, item]) => ({
    path,
    pattern: new RegExp(`^${path.replaceAll(/\{\w+\}/g, "[^/]+")}$`),
    methods: Object.keys(item)
      .filter((key) => METHODS.includes(key.toUpperCase()))
      .map((key) => key.toUpperCase()),
  }));
}

/**
 * What a concrete path allows, from the document alone: the methods of every path of the
 * document it matches (`/v1/agents/verify-card` is also an `{id}`), HEAD wherever GET is.
 */
function allowedAt(templates: Template[], path: string): string[] {
  const methods = new Set(templates.filter((t) => t.pattern.test(path)).flatMap((t) => t.methods));
  if (methods.has("GET")) methods.add("HEAD");
  return [...methods].sort();
}

function message(allowed: string[]) {
  return `This path does not take this method: use ${allowed.join(", ")} (the Allow header).`;
}

describe("a path the service serves, with a method it does not take", () => {
  it("is 405 method_not_allowed with Allow, on every path of the OpenAPI document", async () => {
    const templates = await documentPaths();
    expect(templates.length).toBeGreaterThan(50);
    let checked = 0;
    for (const template of templates) {
      const path = template.path.replaceAll(/\{\w+\}/g, ID);
      const allowed = allowedAt(templates, path);
      expect(allowed.length, path).toBeGreaterThan(0);
      const refused = METHODS.filter((m) => !allowed.includes(m));
      const answers = await Promise.all(
        refused.map((method) => SELF.fetch(`${BASE}${path}`, { method })),
      );
      for (const [i, res] of answers.entries()) {
        const method = refused[i] as string;
        const where = `${method} ${path}`;
        expect(res.status, where).toBe(405);
        expect(res.headers.get("allow"), where).toBe(allowed.join(", "));
        expect(res.headers.get("x-request-id"), where).toMatch(/^req_/);
        const text = await res.text();
        if (method === "HEAD") {
          expect(text, where).toBe("");
        } else {
          expect(JSON.parse(text), where).toEqual(
            errorBody("method_not_allowed", { allowed }, message(allowed)),
          );
        }
        checked++;
      }
    }
    // Every path refuses at least a few of the seven methods.
    expect(checked).toBeGreaterThan(templates.length * 3);
  }, 120_000);

  it("is 405 without a credential check: the method is wrong whoever asks", async () => {
    const res = await callRaw("/v1/me", { method: "DELETE", key: `aar_live_${"A".repeat(43)}` });
    expect(res.status).toBe(405);
    expect(res.json).toEqual(
      errorBody("method_not_allowed", { allowed: ["GET", "HEAD"] }, message(["GET", "HEAD"])),
    );
  });

  it("holds for the routes outside the document too", async () => {
    const openapi = await callRaw("/openapi.json", { method: "POST" });
    expect(openapi.status).toBe(405);
    expect(openapi.headers.get("allow")).toBe("GET, HEAD");
    const logout = await callRaw("/console/auth/logout", { method: "GET" });
    expect(logout.status).toBe(405);
    expect(logout.headers.get("allow")).toBe("POST");
    // The console's paths keep the console's headers on every answer.
    expect(logout.headers.get("content-security-policy")).toContain("default-src 'none'");
  });

  it("is still 404 route_not_found for a path the service does not serve", async () => {
    for (const method of ["GET", "POST", "DELETE"]) {
      const res = await callRaw("/v1/nothing-here", { method });
      expect(res.status).toBe(404);
      expect(res.headers.get("allow")).toBeNull();
      expect(res.error).toEqual(errorBody("route_not_found"));
    }
  });
});

describe("HEAD on a GET route", () => {
  it("answers as GET does, without the body", async () => {
    const get = await SELF.fetch(`${BASE}/health`);
    const head = await SELF.fetch(`${BASE}/health`, { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(head.headers.get("content-type")).toBe(get.headers.get("content-type"));
    expect(await head.text()).toBe("");
    expect(await get.json()).toMatchObject({ status: "ok" });
  });

  it("checks the credential as GET does", async () => {
    const head = await SELF.fetch(`${BASE}/v1/me`, { method: "HEAD" });
    expect(head.status).toBe(401);
    expect(await head.text()).toBe("");
  });
});
