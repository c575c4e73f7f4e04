import { modeOf } from "../env";
import { classifyHost } from "./host-class";
/**
 * The SSRF guard: every URL the service fetches or posts to (Agent Cards now, webhooks later)
 * passes checkOutboundUrl first, and fetchJson is the one way to read JSON from one.
 *
 * What is checked is the URL as the WHATWG parser normalises it, the same parser fetch() uses:
 * decimal, octal and hex IPv4 spellings (http://2130706433/, http://0x7f.1/) already arrive as
 * dotted quads, IPv6 as compressed bracketed text, names lower-cased and in punycode. So a
 * literal address is judged by the IANA special-purpose registries (refused unless globally
 * reachable), and a name by whether it is a public DNS name (host-class.ts, docs/outbound.md).
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
  await refuseUnlessOk(response);
  const body = await readCapped(response, maxBytes, signal);
  try {
    return JSON.parse(new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(body));
  } catch {
    throw new OutboundError("not_json", "the body is not UTF-8 JSON");
  }
}

/**
 * GETs a text document (a signed token such as a `statuslist+jwt`) from a URL the guard allows,
 * with `fetchJson`'s rules: no redirects, at most `maxBytes`, `timeoutMs` for the whole exchange.
 * The body must be UTF-8; what it says is the caller's to verify.
 */
export async function fetchText(
  raw: string,
  policy: OutboundPolicy,
  options: { accept: string; maxBytes: number; timeoutMs: number },
): Promise<string> {
  const checked = checkOutboundUrl(raw, policy);
  if (!checked.ok) throw new OutboundError("url_not_allowed", `refused: ${checked.reason}`);
  const signal = AbortSignal.timeout(options.timeoutMs);
  const response = await send(checked.url, signal, { accept: options.accept });
  await refuseUnlessOk(response);
  const body = await readCapped(response, options.maxBytes, signal);
  try {
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(body);
  } catch {
    throw new OutboundError("not_json", "the body is not UTF-8 text");
  }
}

/** A redirect or any status but 2xx is an OutboundError (the body is not read). */
async function refuseUnlessOk(response: Response): Promise<void> {
  if (response.status >= 300 && response.status < 400) {
    await response.body?.cancel();
    throw new OutboundError("bad_status", `redirect (${response.status}) not followed`);
  }
  if (!response.ok) {
    await response.body?.cancel();
    throw new OutboundError("bad_status", `status ${response.status}`);
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
