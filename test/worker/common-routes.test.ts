import { describe, expect, it } from "vitest";
import { callRaw } from "./support/api";
import { ROUTES } from "./support/routes";

// The per-route auth, scope and cross-tenant tests are in common-routes-<n>.test.ts.
describe("every authenticated route is in the table", () => {
  it("matches the OpenAPI document", async () => {
    const { json } = await callRaw("/openapi.json");
    const documented = Object.entries(json.paths as Record<string, Record<string, any>>).flatMap(
      ([path, ops]) =>
        Object.entries(ops)
          .filter(([, op]) => (op.security ?? []).length > 0)
          .map(([m]) => `${m.toUpperCase()} ${path}`),
    );
    const tested = ROUTES.map((r) => `${r.method} ${r.path}`);
    expect(tested.sort()).toEqual(documented.sort());
  });

  it("marks the same routes live-only as the table, in the OpenAPI document", async () => {
    const { json } = await callRaw("/openapi.json");
    const paths = json.paths as Record<string, Record<string, any>>;
    const documented = Object.entries(paths)
      .flatMap(([path, ops]) =>
        Object.entries(ops)
          .filter(([, op]) => op["x-live-only"] === true)
          .map(([m]) => `${m.toUpperCase()} ${path}`),
      )
      .sort();
    const table = ROUTES.filter((r) => r.liveOnly).map((r) => `${r.method} ${r.path}`);
    expect(documented).toEqual(table.sort());
  });

  it("marks the same routes test-only as the table, in the OpenAPI document", async () => {
    const { json } = await callRaw("/openapi.json");
    const paths = json.paths as Record<string, Record<string, any>>;
    const documented = Object.entries(paths)
      .flatMap(([path, ops]) =>
        Object.entries(ops)
          .filter(([, op]) => op["x-test-only"] === true)
          .map(([m]) => `${m.toUpperCase()} ${path}`),
      )
      .sort();
    const table = ROUTES.filter((r) => r.testOnly).map((r) => `${r.method} ${r.path}`);
    expect(table.length).toBeGreaterThan(0);
    expect(documented).toEqual(table.sort());
  });
});
