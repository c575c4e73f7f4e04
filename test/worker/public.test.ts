import { describe, expect, it } from "vitest";
import { fromBase64url } from "../../src/lib/encoding";
import { call } from "./support/api";

describe("GET /health", () => {
  it("answers 200 with the service name and the AP2 version", async () => {
    const res = await call("/health");
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ status: "ok", service: "agent-risk", ap2: "0.2.0" });
    expect(res.headers.get("x-request-id")).toMatch(/^req_[0-9a-f]{32}$/);
  });
});

describe("GET /.well-known/jwks.json", () => {
  it("publishes the Ed25519 key set with a public one-hour cache", async () => {
    const res = await call("/.well-known/jwks.json");
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("public, max-age=3600");
    expect(res.json.keys).toHaveLength(1);
    const [key] = res.json.keys;
    expect(Object.keys(key).sort()).toEqual(["alg", "crv", "kid", "kty", "use", "x"]);
    expect(key).toMatchObject({ kty: "OKP", crv: "Ed25519", alg: "EdDSA", use: "sig" });
    expect(fromBase64url(key.x)).toHaveLength(32);
  });

  it("names each key by its RFC 7638 thumbprint, computed here without jose", async () => {
    const { json } = await call("/.well-known/jwks.json");
    const [key] = json.keys;
    const canonical = `{"crv":"Ed25519","kty":"OKP","x":"${key.x}"}`;
    const digest = new Uint8Array(
      await crypto.subtle.digest("SHA-256", new TextEncoder().encode(canonical)),
    );
    const expected = btoa(String.fromCharCode(...digest))
      .replaceAll("+", "-")
      .replaceAll("/", "_")
      .replace(/=+$/, "");
    expect(key.kid).toBe(expected);
  });

  it("answers the second request from the edge cache with the same body", async () => {
    const first = await call("/.well-known/jwks.json");
    const second = await call("/.well-known/jwks.json");
    expect(second.status).toBe(200);
    expect(second.json).toEqual(first.json);
    expect(second.headers.get("x-request-id")).not.toBe(first.headers.get("x-request-id"));
  });
});

describe("GET /openapi.json", () => {
  it("serves the OpenAPI 3.1 document of interface version 1.0.0", async () => {
    const res = await call("/openapi.json");
    expect(res.status).toBe(200);
    expect(res.json.openapi).toBe("3.1.0");
    expect(res.json.info.version).toBe("1.0.0");
    expect(Object.keys(res.json.paths)).toEqual(
      expect.arrayContaining([
        "/health",
        "/.well-known/jwks.json",
        "/v1/me",
        "/v1/orgs",
        "/v1/api-keys",
      ]),
    );
  });
});

describe("errors", () => {
  it("answers an unknown route with a JSON 404", async () => {
    const res = await call("/v1/nothing-here");
    expect(res.status).toBe(404);
    expect(res.json).toEqual({ error: "route_not_found" });
    expect(res.headers.get("x-request-id")).toMatch(/^req_/);
  });
});
