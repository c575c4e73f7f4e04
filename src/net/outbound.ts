import { modeOf } from "../env";
/**
 * The SSRF guard: every URL the service fetches or posts to (Agent Cards now, webhooks later)
 * passes checkOutboundUrl first, and fetchJson is the one way to read JSON from one.
 *
 * What is checked is the URL as the WHATWG parser normalises it, the same parser fetch() uses:
 * decimal, octal and hex IPv4 spellings (http://2130706433/, http://0x7f.1/) already arrive as
 * dotted quads, IPv6 as compressed bracketed text, names lower-cased and in punycode. So a
 * literal address is judged by its range, and a name by its suffix.
 *
 * DNS rebinding cannot be checked here: a Worker has no DNS API, so it cannot learn (let alone
 * pin) the address a public name resolves to. That is acceptable because Cloudflare's edge
 * fetch() runs on Cloudflare's network, not inside the customer's: private ranges, loopback and
 * the host's metadata service are not reachable from it, whatever a name resolves to. The
 * literal and name checks stop the obvious cases (and protect local development, where fetch
 * does run on a developer's machine); redirects are refused because each hop would need the
 * same checks.
 */

export interface OutboundPolicy {
  httpsOnly: boolean;
  allowLoopback: boolean;
}

/**
 * Development and tests may reach local fixtures over plain http on loopback; everything else,
 * including an unset or misspelled ENVIRONMENT, gets the strict policy: fail closed.
 */
export function outboundPolicy(env: { ENVIRONMENT?: string }): OutboundPolicy {
  return modeOf(env) !== "production"
    ? { httpsOnly: false, allowLoopback: true }
    : { httpsOnly: true, allowLoopback: false };
}

export type OutboundRefusal =
  | "invalid_url"
  | "scheme_not_allowed"
  | "credentials_in_url"
  | "http_not_allowed"
  | "loopback_not_allowed"
  | "private_address"
  | "metadata_endpoint"
  | "internal_hostname";

/** Whether `raw` may be fetched under `policy`; the parsed URL to fetch when it may. */
export function checkOutboundUrl(
  raw: string,
  policy: OutboundPolicy,
): { ok: true; url: URL } | { ok: false; reason: OutboundRefusal } {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, reason: "invalid_url" };
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    return { ok: false, reason: "scheme_not_allowed" };
  }
  if (url.username !== "" || url.password !== "") {
    return { ok: false, reason: "credentials_in_url" };
  }
  const host = classifyHost(url.hostname);
  if (host === "loopback") {
    if (!policy.allowLoopback) return { ok: false, reason: "loopback_not_allowed" };
    if (url.protocol === "http:" && policy.httpsOnly) {
      return { ok: false, reason: "http_not_allowed" };
    }
    return { ok: true, url };
  }
  if (host !== "public") return { ok: false, reason: host };
  // Plain http is for local fixtures: beyond loopback it is refused under every policy.
  if (url.protocol === "http:") return { ok: false, reason: "http_not_allowed" };
  return { ok: true, url };
}

type HostClass =
  | "public"
  | "loopback"
  | "private_address"
  | "metadata_endpoint"
  | "internal_hostname";

function classifyHost(hostname: string): HostClass {
  if (hostname.startsWith("[")) return classifyIpv6(hostname.slice(1, -1));
  const v4 = parseIpv4(hostname);
  if (v4 !== null) return classifyIpv4(v4);
  return classifyName(hostname.replace(/\.+$/, ""));
}

// ---- Names ---------------------------------------------------------------------------------

const METADATA_NAMES = new Set(["metadata.google.internal", "metadata.goog", "metadata"]);

/** Suffixes that only resolve inside someone's network (RFC 6761, 6762, 8375, common usage). */
const INTERNAL_SUFFIXES = [
  "local",
  "localdomain",
  "internal",
  "intranet",
  "lan",
  "home",
  "corp",
  "private",
  "arpa",
  "invalid",
];

function classifyName(name: string): HostClass {
  if (METADATA_NAMES.has(name)) return "metadata_endpoint";
  if (name === "localhost" || name.endsWith(".localhost")) return "loopback";
  // No dot: resolved through the resolver's search list, i.e. inside the local network.
  if (!name.includes(".")) return "internal_hostname";
  const tld = name.slice(name.lastIndexOf(".") + 1);
  return INTERNAL_SUFFIXES.includes(tld) ? "internal_hostname" : "public";
}

// ---- IPv4 ----------------------------------------------------------------------------------

function parseIpv4(host: string): number | null {
  const parts = host.split(".");
  if (parts.length !== 4 || !parts.every((p) => /^\d{1,3}$/.test(p) && Number(p) <= 255)) {
    return null;
  }
  return parts.reduce((n, p) => n * 256 + Number(p), 0);
}

/** [network, prefix length]: every range no service of ours should reach. */
const IPV4_REFUSED: readonly [string, number][] = [
  ["0.0.0.0", 8], // "this network", unspecified
  ["10.0.0.0", 8],
  ["100.64.0.0", 10], // carrier-grade NAT (and Alibaba's metadata at 100.100.100.200)
  ["169.254.0.0", 16], // link-local, where most clouds put their metadata service
  ["172.16.0.0", 12],
  ["192.0.0.0", 24], // IETF protocol assignments (Oracle's metadata at 192.0.0.192)
  ["192.0.2.0", 24], // documentation
  ["192.88.99.0", 24], // 6to4 relay anycast
  ["192.168.0.0", 16],
  ["198.18.0.0", 15], // benchmarking
  ["198.51.100.0", 24], // documentation
  ["203.0.113.0", 24], // documentation
  ["224.0.0.0", 4], // multicast
  ["240.0.0.0", 4], // reserved, and 255.255.255.255 broadcast
];

const IPV4_RANGES = IPV4_REFUSED.map(([net, bits]) => [parseIpv4(net) ?? 0, bits] as const);

/** AWS/GCP/Azure, AWS ECS task metadata, Alibaba: named so the refusal says what it was. */
const IPV4_METADATA = new Set(
  ["169.254.169.254", "169.254.170.2", "100.100.100.200"].map(parseIpv4),
);

function classifyIpv4(address: number): HostClass {
  if (address >>> 24 === 127) return "loopback";
  if (IPV4_METADATA.has(address)) return "metadata_endpoint";
  const refused = IPV4_RANGES.some(([network, bits]) => inRange(address, network, bits));
  return refused ? "private_address" : "public";
}

function inRange(address: number, network: number, bits: number): boolean {
  const size = 2 ** (32 - bits);
  return Math.floor(address / size) === Math.floor(network / size);
}

// ---- IPv6 ----------------------------------------------------------------------------------

/** Eight 16-bit groups. The parser has already validated and compressed the text. */
function parseIpv6(text: string): number[] {
  const [head = "", tail] = text.split("::") as [string, string | undefined];
  const groups = (part: string) => (part === "" ? [] : part.split(":").flatMap(group));
  const left = groups(head);
  const right = tail === undefined ? [] : groups(tail);
  return [...left, ...new Array(8 - left.length - right.length).fill(0), ...right];
}

/** A group, or the two groups a trailing dotted quad stands for. */
function group(part: string): number[] {
  const v4 = parseIpv4(part);
  if (v4 === null) return [Number.parseInt(part, 16)];
  return [Math.floor(v4 / 65536), v4 % 65536];
}

/** AWS's metadata service over IPv6 (fd00:ec2::254). */
const IPV6_METADATA = [0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254];

function classifyIpv6(text: string): HostClass {
  const g = parseIpv6(text);
  if (g.every((x, i) => x === IPV6_METADATA[i])) return "metadata_endpoint";
  if (g.every((x) => x === 0)) return "private_address"; // :: unspecified
  if (g.slice(0, 7).every((x) => x === 0) && g[7] === 1) return "loopback";
  const embedded = embeddedIpv4(g);
  if (embedded !== null) {
    const inner = classifyIpv4(embedded);
    // A loopback address dressed as IPv6 is never the loopback a developer meant.
    return inner === "loopback" ? "private_address" : inner;
  }
  const first = g[0] ?? 0;
  // Only global unicast (2000::/3) leaves the machine; within it, documentation and Teredo.
  if (first >>> 13 !== 1) return "private_address";
  if (first === 0x2001 && (g[1] === 0xdb8 || g[1] === 0)) return "private_address";
  return "public";
}

/** The IPv4 address inside mapped, compatible, NAT64 and 6to4 forms, which route to it. */
function embeddedIpv4(g: number[]): number | null {
  const tail = (g[6] ?? 0) * 65536 + (g[7] ?? 0);
  const zeros = (from: number, to: number) => g.slice(from, to).every((x) => x === 0);
  if (zeros(0, 5) && (g[5] === 0xffff || g[5] === 0)) return tail; // ::ffff:a.b.c.d, ::a.b.c.d
  if (g[0] === 0x64 && g[1] === 0xff9b && zeros(2, 6)) return tail; // 64:ff9b::/96
  if (g[0] === 0x2002) return (g[1] ?? 0) * 65536 + (g[2] ?? 0); // 2002:V4::/16
  return null;
}

// ---- Fetch ---------------------------------------------------------------------------------

export type OutboundErrorCode =
  | "url_not_allowed"
  | "unreachable"
  | "timeout"
  | "too_large"
  | "bad_status"
  | "not_json";

/** A failed outbound call. The message is for logs; it never carries the upstream body. */
export class OutboundError extends Error {
  override name = "OutboundError";
  constructor(
    readonly code: OutboundErrorCode,
    message: string,
  ) {
    super(message);
  }
}

/**
 * GETs JSON from a URL the guard allows: no redirects (each hop would need checking), at most
 * `maxBytes` of body however the length is declared, and `timeoutMs` for the whole exchange.
 */
export async function fetchJson(
  raw: string,
  policy: OutboundPolicy,
  options: { maxBytes?: number; timeoutMs?: number } = {},
): Promise<unknown> {
  const { maxBytes = 64 * 1024, timeoutMs = 5000 } = options;
  const checked = checkOutboundUrl(raw, policy);
  if (!checked.ok) throw new OutboundError("url_not_allowed", `refused: ${checked.reason}`);
  const signal = AbortSignal.timeout(timeoutMs);
  return readJson(await send(checked.url, signal), maxBytes, signal);
}

/** A 2xx answer's body as UTF-8 JSON; a redirect or any other status is an OutboundError. */
async function readJson(response: Response, maxBytes: number, signal: AbortSignal) {
  if (response.status >= 300 && response.status < 400) {
    await response.body?.cancel();
    throw new OutboundError("bad_status", `redirect (${response.status}) not followed`);
  }
  if (!response.ok) {
    await response.body?.cancel();
    throw new OutboundError("bad_status", `status ${response.status}`);
  }
  const body = await readCapped(response, maxBytes, signal);
  try {
    return JSON.parse(new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(body));
  } catch {
    throw new OutboundError("not_json", "the body is not UTF-8 JSON");
  }
}

/** A revalidated JSON document: 304 when the `etag` sent still names it, else its body. */
export type Revalidated = { status: 304 } | { status: 200; json: unknown; etag: string | null };

/**
 * `fetchJson` with HTTP revalidation: sends `If-None-Match` when an `etag` is given, answers a
 * 304 as such (no body read), and returns the answer's `ETag`.
 */
export async function fetchJsonRevalidated(
  raw: string,
  policy: OutboundPolicy,
  options: { etag?: string | null; maxBytes?: number; timeoutMs?: number } = {},
): Promise<Revalidated> {
  const { etag, maxBytes = 64 * 1024, timeoutMs = 5000 } = options;
  const checked = checkOutboundUrl(raw, policy);
  if (!checked.ok) throw new OutboundError("url_not_allowed", `refused: ${checked.reason}`);
  const signal = AbortSignal.timeout(timeoutMs);
  const response = await send(checked.url, signal, etag ? { "if-none-match": etag } : {});
  if (response.status === 304 && etag) {
    await response.body?.cancel();
    return { status: 304 };
  }
  return {
    status: 200,
    json: await readJson(response, maxBytes, signal),
    etag: response.headers.get("etag"),
  };
}

/**
 * POSTs exact bytes to a URL the guard allows and answers the status, reading none of the
 * answer's body: no redirects (a 3xx is an answer like any other), `timeoutMs` for the whole
 * exchange. Throws OutboundError when the URL is refused or no answer came.
 */
export async function postBytes(
  raw: string,
  policy: OutboundPolicy,
  body: Uint8Array,
  headers: Record<string, string>,
  timeoutMs: number,
): Promise<number> {
  const checked = checkOutboundUrl(raw, policy);
  if (!checked.ok) throw new OutboundError("url_not_allowed", `refused: ${checked.reason}`);
  const signal = AbortSignal.timeout(timeoutMs);
  try {
    const response = await fetch(checked.url, {
      method: "POST",
      redirect: "manual",
      signal,
      headers,
      body,
    });
    await response.body?.cancel();
    return response.status;
  } catch (error) {
    if (signal.aborted) throw new OutboundError("timeout", `no answer in ${timeoutMs} ms`);
    throw new OutboundError("unreachable", error instanceof Error ? error.message : "fetch failed");
  }
}

async function send(
  url: URL,
  signal: AbortSignal,
  headers: Record<string, string> = {},
): Promise<Response> {
  try {
    return await fetch(url, {
      redirect: "manual",
      signal,
      headers: { accept: "application/json", ...headers },
    });
  } catch (error) {
    if (signal.aborted) throw new OutboundError("timeout", "no response in time");
    throw new OutboundError("unreachable", error instanceof Error ? error.message : "fetch failed");
  }
}

async function readCapped(response: Response, maxBytes: number, signal: AbortSignal) {
  const declared = Number(response.headers.get("content-length"));
  if (declared > maxBytes) {
    await response.body?.cancel();
    throw new OutboundError("too_large", `declared ${declared} bytes, over ${maxBytes}`);
  }
  if (!response.body) return new Uint8Array();
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    for (;;) {
      const { done, value } = await readBefore(reader, signal);
      if (done) break;
      total += value.byteLength;
      // The declared length may lie or be absent: the bytes actually read are what count.
      if (total > maxBytes) throw new OutboundError("too_large", `body over ${maxBytes} bytes`);
      chunks.push(value);
    }
  } catch (error) {
    await reader.cancel().catch(() => {});
    if (error instanceof OutboundError) throw error;
    throw new OutboundError("unreachable", "the body could not be read");
  }
  return concat(chunks, total);
}

/** A read that gives up when the deadline passes, even if the stream ignores the signal. */
function readBefore(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  signal: AbortSignal,
): Promise<ReadableStreamReadResult<Uint8Array>> {
  const timeout = () => new OutboundError("timeout", "body not received in time");
  if (signal.aborted) return Promise.reject(timeout());
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(timeout());
    signal.addEventListener("abort", onAbort, { once: true });
    reader.read().then(
      (result) => {
        signal.removeEventListener("abort", onAbort);
        resolve(result);
      },
      (error: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(signal.aborted ? timeout() : error);
      },
    );
  });
}

function concat(chunks: Uint8Array[], total: number): Uint8Array {
  const body = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    body.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return body;
}
