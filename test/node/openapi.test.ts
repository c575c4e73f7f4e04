import { Validator } from "@seriousme/openapi-schema-validator";
import { describe, expect, it } from "vitest";
import { buildApp } from "../../src/app";

// The validator compiles JSON Schemas with code generation, which workerd forbids, so the
// document is built here in Node from the same app the Worker serves.
describe("the OpenAPI document", () => {
  it("is a valid OpenAPI 3.1 document", async () => {
    const response = await buildApp().request("/openapi.json");
    expect(response.status).toBe(200);
    const document = (await response.json()) as any;
    const result = await new Validator().validate(document);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(document.openapi).toBe("3.1.0");
    expect(document.info.version).toBe("1.0.0");
  });

  it("declares the security and the scope of every authenticated route", async () => {
    const document = (await (await buildApp().request("/openapi.json")).json()) as any;
    for (const [path, operations] of Object.entries<Record<string, any>>(document.paths)) {
      if (!path.startsWith("/v1/")) continue;
      for (const operation of Object.values(operations)) {
        expect(operation.security?.length, path).toBeGreaterThan(0);
        expect(operation, path).toHaveProperty("x-required-scope");
        expect(Object.keys(operation.responses), path).toContain("401");
      }
    }
  });
});
