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

  it("declares the security and the scope of every route but the public ones", async () => {
    const document = (await (await buildApp().request("/openapi.json")).json()) as any;
    const operations = Object.entries<Record<string, any>>(document.paths).flatMap(([path, ops]) =>
      Object.entries(ops).map(([method, op]) => ({ name: `${method.toUpperCase()} ${path}`, op })),
    );
    const unguarded = operations.filter(({ op }) => !(op.security?.length > 0));
    expect(unguarded.map((o) => o.name).sort()).toEqual([...PUBLIC].sort());
    for (const { name, op } of operations) {
      if (PUBLIC.includes(name)) continue;
      expect(op, name).toHaveProperty("x-required-scope");
      expect(Object.keys(op.responses), name).toContain("401");
      expect(Object.keys(op.responses), name).toContain("403");
    }
  });
});

/** The spec's public endpoints: no credential, and nothing else may be unguarded. */
const PUBLIC = [
  // Where to start: links to the reference and the console (docs/api.md).
  "GET /",
  "GET /health",
  "GET /.well-known/jwks.json",
  "GET /v1/transparency/logs/{logId}",
  "GET /v1/transparency/logs/{logId}/checkpoints",
  "GET /v1/transparency/logs/{logId}/consistency",
  "GET /v1/transparency/proofs/{leafHash}",
  // evidence: artifacts
  "GET /v1/verify/artifact",
  "GET /v1/trust-list",
  // Other verifiers' reads: the service's Token Status Lists (docs/status-lists.md) and x402's
  // risk-check discovery document (docs/rails.md).
  "GET /v1/status-lists/{id}",
  "GET /.well-known/risk-check.json",
  // The payment provider's webhook: its signature is the credential (docs/billing.md).
  "POST /v1/billing/webhooks/stripe",
];
