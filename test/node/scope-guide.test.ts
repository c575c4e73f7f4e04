import { describe, expect, it } from "vitest";
import { buildApp } from "../../src/app";
import {
  keyScopes,
  LIVE_ONLY_SCOPES,
  SCOPE_GUIDE,
  SCOPES,
  type Scope,
} from "../../src/auth/scope-names";

// The key form's scope list (console/src/pages/api-keys.tsx) comes from src/auth/scope-names.ts.
// Its live-only part is checked here against the routes themselves, through the OpenAPI
// document each route declares its scope and live-only flag in (src/http/route.ts).

async function routesByScope() {
  const document = (await (await buildApp().request("/openapi.json")).json()) as {
    paths: Record<string, Record<string, Record<string, unknown>>>;
  };
  const byScope = new Map<Scope, { live: string[]; both: string[] }>();
  for (const [path, item] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(item)) {
      const required = operation["x-required-scope"] as Scope | Scope[] | null | undefined;
      if (!required) continue;
      for (const scope of [required].flat()) {
        const entry = byScope.get(scope) ?? { live: [], both: [] };
        (operation["x-live-only"] ? entry.live : entry.both).push(`${method} ${path}`);
        byScope.set(scope, entry);
      }
    }
  }
  return byScope;
}

describe("the scopes a key is offered", () => {
  it("names as live-only exactly the scopes whose every route refuses a test key", async () => {
    const byScope = await routesByScope();
    const liveOnly = [...byScope]
      .filter(([, routes]) => routes.live.length > 0 && routes.both.length === 0)
      .map(([scope]) => scope);
    expect([...liveOnly].sort()).toEqual([...LIVE_ONLY_SCOPES].sort());
  });

  it("says which scopes are live-only in part, where a test key can use some routes", async () => {
    const byScope = await routesByScope();
    const partly = [...byScope]
      .filter(([, routes]) => routes.live.length > 0 && routes.both.length > 0)
      .map(([scope]) => scope);
    const described = SCOPES.filter((scope) => SCOPE_GUIDE[scope].liveOnly !== undefined);
    expect([...described].sort()).toEqual([...partly].sort());
  });

  it("offers a test key no live-only scope and no key a session-only one", () => {
    expect(keyScopes("test")).not.toContain("agents:write");
    expect(keyScopes("test").filter((s) => LIVE_ONLY_SCOPES.includes(s))).toEqual([]);
    expect(keyScopes("live")).toContain("agents:write");
    expect(keyScopes("live")).not.toContain("keys:write");
    expect(keyScopes("live")).not.toContain("network:write");
    expect(keyScopes("live")).toHaveLength(SCOPES.length - 3);
  });
});
