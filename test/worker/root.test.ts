import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { errorMessages } from "../../src/errors";
import { cspWeaknesses } from "../support/csp";
import { BASE, call, callRaw } from "./support/api";
import { fetchWith } from "./support/assess";

// GET /: where a person or a client starts (docs/api.md). Every address comes from
// PUBLIC_BASE_URL, never from the request's host (https://risk.test here).

const ORIGIN = env.PUBLIC_BASE_URL as string;

describe("GET /", () => {
  it("answers a client with JSON naming the reference, the console, the document and /health", async () => {
    const res = await call("/", { headers: { accept: "application/json" } });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    expect(res.headers.get("vary")).toMatch(/accept/i);
    expect(res.json).toEqual({
      service: "agent-risk",
      docs: `${ORIGIN}/docs`,
      console: `${ORIGIN}/console/`,
      openapi: `${ORIGIN}/openapi.json`,
      health: `${ORIGIN}/health`,
    });
  });

  it("answers JSON when the client says nothing about what it accepts", async () => {
    const res = await call("/");
    expect(res.status).toBe(200);
    expect(res.json.docs).toBe(`${ORIGIN}/docs`);
  });

  it("answers a browser with a small page, under a strict Content-Security-Policy", async () => {
    const accept = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8";
    const res = await call("/", { headers: { accept } });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/html; charset=UTF-8");
    expect(cspWeaknesses(res.headers.get("content-security-policy"))).toEqual([]);
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    expect(res.headers.get("referrer-policy")).toBe("no-referrer");
    expect(res.headers.get("vary")).toMatch(/accept/i);
    const links = [...res.text.matchAll(/<a href="([^"]+)">([^<]+)<\/a>/g)].map((m) => [
      m[1],
      m[2],
    ]);
    expect(links).toEqual([
      [`${ORIGIN}/docs`, "API reference"],
      [`${ORIGIN}/console/`, "Console"],
      [`${ORIGIN}/openapi.json`, "OpenAPI document"],
    ]);
    expect(res.text).not.toMatch(/<script|<style|\sstyle=/);
  });

  it("is the Worker's to answer: the asset layer has no file for /", async () => {
    const asset = await env.ASSETS!.fetch(`${BASE}/`);
    expect(asset.status).toBe(404);
    await asset.body?.cancel();
  });

  it("takes GET and HEAD only", async () => {
    const res = await callRaw("/", { method: "POST" });
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("GET, HEAD");
    expect(res.json.error).toBe("method_not_allowed");
  });

  it("is 503 service_misconfigured without PUBLIC_BASE_URL, never an address from the request", async () => {
    const res = await fetchWith({ PUBLIC_BASE_URL: undefined }, "/");
    expect(res.status).toBe(503);
    // No doc_url either: it would be built from the setting that is missing.
    expect(res.json).toEqual({
      error: "service_misconfigured",
      message: errorMessages.service_misconfigured,
      details: { setting: "PUBLIC_BASE_URL" },
    });
  });
});
