import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { fromBase64url } from "#audit/encoding";
import type { PublicEs256Key, PublishedKey } from "../../src/signing/signer";
import worker from "../../workers/main";
import { BASE, call, callRaw } from "./support/api";
import { errorBody } from "./support/errors";

describe("GET /health", () => {
  it("answers 200 with the service name and the AP2 version", async () => {
    const res = await call("/health");
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ status: "ok", service: "agent-risk", ap2: "0.2.0" });
    expect(res.headers.get("x-request-id")).toMatch(/^req_[0-9a-f]{32}$/);
  });
});

describe("GET /.well-known/jwks.json", () => {
  it("publishes the Ed25519 key, then the ES256 key, with a public one-hour cache", async () => {
    const res = await call("/.well-known/jwks.json");
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("public, max-age=3600");
    expect(res.json.keys).toHaveLength(2);
    const [ed25519, p256] = res.json.keys as [PublishedKey, PublicEs256Key];
    expect(Object.keys(ed25519!).sort()).toEqual(["alg", "crv", "kid", "kty", "use", "x"]);
    expect(ed25519).toMatchObject({ kty: "OKP", crv: "Ed25519", alg: "EdDSA", use: "sig" });
    expect(fromBase64url(ed25519!.x)).toHaveLength(32);
    expect(Object.keys(p256!).sort()).toEqual(["alg", "crv", "kid", "kty", "use", "x", "y"]);
    expect(p256).toMatchObject({ kty: "EC", crv: "P-256", alg: "ES256", use: "sig" });
    expect(fromBase64url(p256!.x)).toHaveLength(32);
    expect(fromBase64url(p256!.y)).toHaveLength(32);
  });

  it("names each key by its RFC 7638 thumbprint, computed here without jose", async () => {
    const { json } = await call("/.well-known/jwks.json");
    const [ed25519, p256] = json.keys as [PublishedKey, PublicEs256Key];
    const thumbprint = async (canonical: string) => {
      const digest = new Uint8Array(
        await crypto.subtle.digest("SHA-256", new TextEncoder().encode(canonical)),
      );
      return btoa(String.fromCharCode(...digest))
        .replaceAll("+", "-")
        .replaceAll("/", "_")
        .replace(/=+$/, "");
    };
    expect(ed25519!.kid).toBe(
      await thumbprint(`{"crv":"Ed25519","kty":"OKP","x":"${ed25519!.x}"}`),
    );
    expect(p256!.kid).toBe(
      await thumbprint(`{"crv":"P-256","kty":"EC","x":"${p256!.x}","y":"${p256!.y}"}`),
    );
  });

  it("still publishes the Ed25519 key when the ES256 key is missing or unusable", async () => {
    for (const SIGNING_KEY_ES256 of [undefined, "not json", '{"kty":"EC","crv":"P-256"}']) {
      const ctx = createExecutionContext();
      const res = await worker.fetch(
        new Request(`${BASE}/.well-known/jwks.json`),
        { ...env, SIGNING_KEY_ES256 },
        ctx,
      );
      await waitOnExecutionContext(ctx);
      expect(res.status).toBe(200);
      const body = (await res.json()) as { keys: { alg: string }[] };
      expect(body.keys.map((k) => k.alg)).toEqual(["EdDSA"]);
    }
  });

  it("keeps the key set in the edge cache, keyed by the keys it holds", async () => {
    const first = await call("/.well-known/jwks.json");
    const version = first.json.keys.map((k: { kid: string }) => k.kid).join(".");
    const cached = await caches.default.match(`${BASE}/.well-known/jwks.json?keys=${version}`);
    expect(cached?.status).toBe(200);
    expect(await cached?.json()).toEqual(first.json);
    const second = await call("/.well-known/jwks.json");
    expect(second.json).toEqual(first.json);
    expect(second.headers.get("x-request-id")).not.toBe(first.headers.get("x-request-id"));
  });

  it("publishes a rotated key at once, not after the cached hour", async () => {
    const before = await call("/.well-known/jwks.json");
    const pair = (await crypto.subtle.generateKey({ name: "Ed25519" }, true, [
      "sign",
      "verify",
    ])) as CryptoKeyPair;
    const rotated = JSON.stringify(await crypto.subtle.exportKey("jwk", pair.privateKey));
    const retired = JSON.stringify([{ kty: "OKP", crv: "Ed25519", x: before.json.keys[0]!.x }]);
    const ctx = createExecutionContext();
    const res = await worker.fetch(
      new Request(`${BASE}/.well-known/jwks.json`),
      { ...env, SIGNING_KEY: rotated, SIGNING_KEYS_RETIRED: retired },
      ctx,
    );
    await waitOnExecutionContext(ctx);
    const after = (await res.json()) as { keys: { kid: string; x: string }[] };
    expect(after.keys).toHaveLength(3);
    expect(after.keys[0]?.kid).not.toBe(before.json.keys[0]!.kid);
    // The current ES256 key is unchanged; the retired Ed25519 key follows the current keys.
    expect(after.keys[1]?.kid).toBe(before.json.keys[1]!.kid);
    expect(after.keys[2]?.kid).toBe(before.json.keys[0]!.kid);
  });
});

describe("GET /openapi.json", () => {
  it("serves the OpenAPI 3.1 document of interface version 1.0.0", async () => {
    const res = await callRaw("/openapi.json");
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
    const res = await callRaw("/v1/nothing-here");
    expect(res.status).toBe(404);
    expect(res.error).toEqual(errorBody("route_not_found"));
    expect(res.headers.get("x-request-id")).toMatch(/^req_/);
  });
});
