import { afterEach, describe, expect, it, vi } from "vitest";
import {
  checkOutboundUrl,
  fetchJson,
  OutboundError,
  type OutboundPolicy,
  outboundPolicy,
} from "../../src/net/outbound";

const PRODUCTION: OutboundPolicy = { httpsOnly: true, allowLoopback: false };
const DEVELOPMENT: OutboundPolicy = { httpsOnly: false, allowLoopback: true };

describe("outboundPolicy", () => {
  it("lets development and test reach loopback over http", () => {
    expect(outboundPolicy({ ENVIRONMENT: "development" })).toEqual(DEVELOPMENT);
    expect(outboundPolicy({ ENVIRONMENT: "test" })).toEqual(DEVELOPMENT);
  });

  it("is strict for production, and for an unset or unknown environment", () => {
    for (const ENVIRONMENT of ["production", undefined, "", "staging", "Development", "TEST"]) {
      expect(outboundPolicy({ ENVIRONMENT })).toEqual(PRODUCTION);
    }
  });
});

const ALLOWED = [
  "https://agents.example.com/.well-known/agent-card.json",
  "https://agents.example.com:8443/a2a?x=1#frag",
  "https://example.com./",
  "https://bücher.example.com/card.json",
  "https://8.8.8.8/",
  "https://172.15.255.255/",
  "https://172.32.0.1/",
  "https://100.63.255.255/",
  "https://100.128.0.1/",
  "https://[2606:4700:4700::1111]/",
];

/** Refused under both policies, for the same reason. */
const HOSTILE: [string, string][] = [
  ["not a url", "invalid_url"],
  ["", "invalid_url"],
  ["//agents.example.com/card", "invalid_url"],
  ["ftp://agents.example.com/card", "scheme_not_allowed"],
  ["file:///etc/passwd", "scheme_not_allowed"],
  ["gopher://agents.example.com:70/", "scheme_not_allowed"],
  ["data:application/json,{}", "scheme_not_allowed"],
  ["javascript:alert(1)", "scheme_not_allowed"],
  ["ws://agents.example.com/", "scheme_not_allowed"],
  ["https://user:pass@agents.example.com/", "credentials_in_url"],
  ["https://user@agents.example.com/", "credentials_in_url"],
  ["http://agents.example.com/.well-known/agent-card.json", "http_not_allowed"],
  ["http://8.8.8.8/", "http_not_allowed"],
  // private, CGNAT, unspecified, link-local, multicast, reserved, broadcast
  ["https://10.0.0.1/", "private_address"],
  ["https://10.255.255.255/", "private_address"],
  ["https://172.16.0.1/", "private_address"],
  ["https://172.31.255.255/", "private_address"],
  ["https://192.168.1.1/", "private_address"],
  ["http://192.168.1.1/", "private_address"],
  ["https://100.64.0.1/", "private_address"],
  ["https://100.127.255.255/", "private_address"],
  ["https://0.0.0.0/", "private_address"],
  ["https://0/", "private_address"],
  ["https://169.254.1.1/", "private_address"],
  ["https://224.0.0.1/", "private_address"],
  ["https://239.255.255.250/", "private_address"],
  ["https://240.0.0.1/", "private_address"],
  ["https://255.255.255.255/", "private_address"],
  ["https://192.0.2.1/", "private_address"],
  ["https://198.18.0.1/", "private_address"],
  // other spellings the URL parser turns into dotted quads
  ["https://167772161/", "private_address"], // 10.0.0.1 in decimal
  ["https://0xa.0.0.1/", "private_address"],
  ["https://012.0.0.1/", "private_address"], // octal 10
  ["https://0xc0a80101/", "private_address"], // 192.168.1.1
  ["https://10.1/", "private_address"],
  // IPv6
  ["https://[::]/", "private_address"],
  ["https://[fe80::1]/", "private_address"],
  ["https://[febf:ffff::1]/", "private_address"],
  ["https://[fc00::1]/", "private_address"],
  ["https://[fd12:3456:789a::1]/", "private_address"],
  ["https://[ff02::1]/", "private_address"],
  ["https://[ff0e::1]/", "private_address"],
  ["https://[2001:db8::1]/", "private_address"],
  ["https://[::ffff:10.0.0.1]/", "private_address"],
  ["https://[::ffff:a00:1]/", "private_address"],
  ["https://[0:0:0:0:0:ffff:c0a8:101]/", "private_address"],
  ["https://[::ffff:127.0.0.1]/", "private_address"],
  ["https://[::10.0.0.1]/", "private_address"],
  ["https://[::127.0.0.1]/", "private_address"],
  ["https://[64:ff9b::10.0.0.1]/", "private_address"],
  ["https://[64:ff9b::c0a8:101]/", "private_address"],
  ["https://[64:ff9b::7f00:1]/", "private_address"],
  ["https://[2002:a00:1::1]/", "private_address"],
  // issue 37: documentation and ORCHID blocks (the registries, row by row, are in
  // outbound-registries.test.ts)
  ["https://[3fff::1]/", "private_address"],
  ["https://[2001:10::1]/", "private_address"],
  ["https://[2001:20::1]/", "private_address"],
  // cloud metadata
  ["https://169.254.169.254/latest/meta-data/", "metadata_endpoint"],
  ["http://169.254.169.254/computeMetadata/v1/", "metadata_endpoint"],
  ["https://2852039166/", "metadata_endpoint"], // 169.254.169.254 in decimal
  ["https://0xa9fea9fe/", "metadata_endpoint"],
  ["https://169.254.170.2/v2/credentials", "metadata_endpoint"],
  ["https://100.100.100.200/latest/meta-data/", "metadata_endpoint"],
  ["https://[fd00:ec2::254]/latest/meta-data/", "metadata_endpoint"],
  ["https://[::ffff:169.254.169.254]/", "metadata_endpoint"],
  ["https://[::ffff:a9fe:a9fe]/", "metadata_endpoint"],
  ["https://[64:ff9b::169.254.169.254]/", "metadata_endpoint"],
  ["https://metadata.google.internal/computeMetadata/v1/", "metadata_endpoint"],
  ["https://METADATA.GOOGLE.INTERNAL./", "metadata_endpoint"],
  ["https://metadata.goog/", "metadata_endpoint"],
  ["https://metadata/", "metadata_endpoint"],
  // internal names
  ["https://intranet/", "internal_hostname"],
  ["https://printer.local/", "internal_hostname"],
  ["https://db.internal/", "internal_hostname"],
  ["https://nas.lan/", "internal_hostname"],
  ["https://router.home.arpa/", "internal_hostname"],
  ["https://git.corp/", "internal_hostname"],
  ["https://host.localdomain/", "internal_hostname"],
  ["https://1.0.0.10.in-addr.arpa/", "internal_hostname"],
  ["https://wiki.corp./", "internal_hostname"],
  ["https://kubernetes.default.svc/", "internal_hostname"],
  ["https://kubernetes.default.svc.cluster.local/", "internal_hostname"],
  ["https://kubernetes/", "internal_hostname"],
  ["https://metadata.internal./", "internal_hostname"],
  ["https://app.localhost.internal/", "internal_hostname"],
];

/** Refused in production, allowed in development: loopback in its canonical spellings. */
const LOOPBACK = [
  "http://localhost:8001/a2a/merchant_agent",
  "https://localhost/",
  "http://LOCALHOST./",
  "http://agent.localhost/",
  "http://127.0.0.1:8787/",
  "http://127.1.2.3/",
  "http://2130706433/", // 127.0.0.1 in decimal
  "http://0x7f000001/",
  "http://0177.0.0.1/", // octal
  "http://0x7f.1/",
  "http://127.1/",
  "http://[::1]:8787/",
  "http://[0:0:0:0:0:0:0:1]/",
];

describe("checkOutboundUrl", () => {
  it.each(ALLOWED)("allows %s under both policies", (url) => {
    for (const policy of [PRODUCTION, DEVELOPMENT]) {
      const result = checkOutboundUrl(url, policy);
      expect(result.ok).toBe(true);
      if (result.ok) expect(result.url.protocol).toBe("https:");
    }
  });

  it.each(HOSTILE)("refuses %s under both policies (%s)", (url, reason) => {
    expect(checkOutboundUrl(url, PRODUCTION)).toEqual({ ok: false, reason });
    expect(checkOutboundUrl(url, DEVELOPMENT)).toEqual({ ok: false, reason });
  });

  it.each(LOOPBACK)("refuses loopback %s in production, allows it in development", (url) => {
    expect(checkOutboundUrl(url, PRODUCTION)).toEqual({
      ok: false,
      reason: "loopback_not_allowed",
    });
    expect(checkOutboundUrl(url, DEVELOPMENT).ok).toBe(true);
  });

  it("keeps loopback on https when a policy allows loopback but insists on https", () => {
    const policy = { httpsOnly: true, allowLoopback: true };
    expect(checkOutboundUrl("https://localhost/", policy).ok).toBe(true);
    expect(checkOutboundUrl("http://localhost/", policy)).toEqual({
      ok: false,
      reason: "http_not_allowed",
    });
  });

  it("returns the URL as normalised, which is what gets fetched", () => {
    const result = checkOutboundUrl("HTTPS://Agents.Example.COM:443/a/../card.json", PRODUCTION);
    expect(result.ok && result.url.href).toBe("https://agents.example.com/card.json");
  });
});

// The pool (0.15) no longer ships `fetchMock`, and a test cannot start a server inside workerd:
// these tests replace the global fetch for their own duration only.
function stubFetch(respond: (url: URL, init: RequestInit) => Response | Promise<Response>) {
  const fake = vi.fn(async (input: RequestInfo | URL, init?: RequestInit) =>
    respond(new URL(String(input)), init ?? {}),
  );
  vi.stubGlobal("fetch", fake);
  return fake;
}

function streamOf(chunks: Uint8Array[], options: { close?: boolean } = {}) {
  const cancelled = { value: false };
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(chunk);
      if (options.close !== false) controller.close();
    },
    cancel() {
      cancelled.value = true;
    },
  });
  return { body, cancelled };
}

async function outboundError(promise: Promise<unknown>): Promise<OutboundError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(OutboundError);
  return error as OutboundError;
}

const CARD_URL = "https://agents.example.com/.well-known/agent-card.json";

describe("fetchJson", () => {
  afterEach(() => {
    vi.unstubAllGlobals();
  });

  it("returns the parsed body, asking for JSON and refusing to follow redirects", async () => {
    const fake = stubFetch(() => Response.json({ name: "MerchantAgent" }));
    expect(await fetchJson(CARD_URL, PRODUCTION)).toEqual({ name: "MerchantAgent" });
    expect(fake).toHaveBeenCalledTimes(1);
    const [url, init] = fake.mock.calls[0] as [URL, RequestInit];
    expect(String(url)).toBe(CARD_URL);
    expect(init.redirect).toBe("manual");
    expect(init.signal).toBeInstanceOf(AbortSignal);
    expect(new Headers(init.headers).get("accept")).toBe("application/json");
  });

  it("never calls fetch for a refused URL", async () => {
    const fake = stubFetch(() => Response.json({}));
    for (const [url] of HOSTILE) {
      const error = await outboundError(fetchJson(url, PRODUCTION));
      expect(error.code).toBe("url_not_allowed");
    }
    expect((await outboundError(fetchJson("http://localhost/", PRODUCTION))).code).toBe(
      "url_not_allowed",
    );
    expect(fake).not.toHaveBeenCalled();
  });

  it("treats a redirect as an error, wherever it points", async () => {
    for (const status of [301, 302, 303, 307, 308]) {
      stubFetch(
        () => new Response(null, { status, headers: { location: "http://169.254.169.254/" } }),
      );
      const error = await outboundError(fetchJson(CARD_URL, PRODUCTION));
      expect(error.code).toBe("bad_status");
    }
  });

  it("answers bad_status to a non-2xx response", async () => {
    for (const status of [400, 404, 500, 503]) {
      stubFetch(() => Response.json({ error: "nope" }, { status }));
      expect((await outboundError(fetchJson(CARD_URL, PRODUCTION))).code).toBe("bad_status");
    }
  });

  it("answers not_json to a body that is not JSON, or not UTF-8", async () => {
    for (const body of ["<html>", "", new Uint8Array([0x22, 0xff, 0x22])]) {
      stubFetch(() => new Response(body));
      expect((await outboundError(fetchJson(CARD_URL, PRODUCTION))).code).toBe("not_json");
    }
  });

  it("accepts a body of exactly maxBytes", async () => {
    const text = JSON.stringify("x".repeat(98)); // 100 bytes
    stubFetch(() => new Response(text));
    expect(await fetchJson(CARD_URL, PRODUCTION, { maxBytes: 100 })).toBe("x".repeat(98));
  });

  it("refuses a body whose declared length is over the limit, without reading it", async () => {
    const { body, cancelled } = streamOf([new Uint8Array(10)], { close: false });
    stubFetch(() => new Response(body, { headers: { "content-length": "1000000" } }));
    const error = await outboundError(fetchJson(CARD_URL, PRODUCTION, { maxBytes: 100 }));
    expect(error.code).toBe("too_large");
    expect(cancelled.value).toBe(true);
  });

  it("stops reading a streamed body at the limit when no length is declared", async () => {
    const chunk = new TextEncoder().encode(" ".repeat(40));
    const { body, cancelled } = streamOf([chunk, chunk, chunk, chunk], { close: false });
    stubFetch(() => new Response(body));
    const error = await outboundError(fetchJson(CARD_URL, PRODUCTION, { maxBytes: 100 }));
    expect(error.code).toBe("too_large");
    expect(cancelled.value).toBe(true);
  });

  it("does not trust a declared length smaller than the body", async () => {
    const big = new TextEncoder().encode(JSON.stringify("y".repeat(500)));
    const { body } = streamOf([big]);
    stubFetch(() => new Response(body, { headers: { "content-length": "10" } }));
    const error = await outboundError(fetchJson(CARD_URL, PRODUCTION, { maxBytes: 100 }));
    expect(error.code).toBe("too_large");
  });

  it("times out when no response comes", async () => {
    stubFetch(
      (_url, init) =>
        new Promise<Response>((_resolve, reject) => {
          init.signal?.addEventListener("abort", () => reject(init.signal?.reason));
        }),
    );
    const error = await outboundError(fetchJson(CARD_URL, PRODUCTION, { timeoutMs: 50 }));
    expect(error.code).toBe("timeout");
  });

  it("times out when the body trickles and never ends", async () => {
    const { body, cancelled } = streamOf([new TextEncoder().encode('{"a":')], { close: false });
    stubFetch(() => new Response(body));
    const error = await outboundError(fetchJson(CARD_URL, PRODUCTION, { timeoutMs: 50 }));
    expect(error.code).toBe("timeout");
    expect(cancelled.value).toBe(true);
  });

  it("answers unreachable when the connection fails", async () => {
    stubFetch(() => {
      throw new TypeError("Network connection lost.");
    });
    expect((await outboundError(fetchJson(CARD_URL, PRODUCTION))).code).toBe("unreachable");
  });
});
