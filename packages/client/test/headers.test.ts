import { describe, expect, it } from "vitest";
import { createClient } from "../src/index.js";

// A browser signed in to the console calls without an API key: its session cookie goes by
// itself, and each request adds headers read at that moment (the CSRF token, the mode switch).

const me = () =>
  new Response(JSON.stringify({ orgId: "o", actor: { type: "user", id: "u" }, scopes: [] }), {
    status: 200,
    headers: { "content-type": "application/json" },
  });

function recording(options: Omit<Parameters<typeof createClient>[0], "baseUrl" | "fetch">) {
  const sent: Request[] = [];
  const client = createClient({
    baseUrl: "https://risk.example",
    fetch: async (request) => {
      sent.push(request);
      return me();
    },
    ...options,
  });
  return { client, sent };
}

describe("createClient without an API key", () => {
  it("sends no x-api-key at all", async () => {
    const { client, sent } = recording({});
    await client.GET("/v1/me");
    expect(sent[0]?.headers.has("x-api-key")).toBe(false);
  });

  it("adds the provider's headers to every request, read again for each", async () => {
    let mode = "live";
    const { client, sent } = recording({
      headers: () => ({ "x-csrf-token": "tok", "x-mode": mode }),
    });
    await client.GET("/v1/me");
    mode = "test";
    await client.GET("/v1/me");
    expect(sent.map((r) => [r.headers.get("x-csrf-token"), r.headers.get("x-mode")])).toEqual([
      ["tok", "live"],
      ["tok", "test"],
    ]);
  });

  it("takes a fixed object of headers, and an async provider", async () => {
    const fixed = recording({ headers: { "x-org-id": "org_1" } });
    await fixed.client.GET("/v1/me");
    expect(fixed.sent[0]?.headers.get("x-org-id")).toBe("org_1");
    const later = recording({ headers: async () => ({ "x-org-id": "org_2" }) });
    await later.client.GET("/v1/me");
    expect(later.sent[0]?.headers.get("x-org-id")).toBe("org_2");
  });

  it("keeps a header the call sets itself over the provider's", async () => {
    const { client, sent } = recording({ headers: { "x-org-id": "default" } });
    await client.GET("/v1/me", { headers: { "x-org-id": "chosen" } });
    expect(sent[0]?.headers.get("x-org-id")).toBe("chosen");
  });

  it("sends a POST body intact through the provider", async () => {
    const { client, sent } = recording({ headers: { "x-csrf-token": "tok" } });
    await client.POST("/v1/orgs", { body: { name: "Acme" } });
    expect(sent[0]?.method).toBe("POST");
    expect(sent[0]?.headers.get("x-csrf-token")).toBe("tok");
    expect(await sent[0]?.json()).toEqual({ name: "Acme" });
  });

  it("sets the request's credentials mode when asked", async () => {
    const { client, sent } = recording({ credentials: "include" });
    await client.GET("/v1/me");
    expect(sent[0]?.credentials).toBe("include");
  });

  it("still sends the API key when one is given, beside the provider's headers", async () => {
    const { client, sent } = recording({ apiKey: "sk_live_x", headers: { "x-mode": "live" } });
    await client.GET("/v1/me");
    expect(sent[0]?.headers.get("x-api-key")).toBe("sk_live_x");
    expect(sent[0]?.headers.get("x-mode")).toBe("live");
  });
});
