import { retryAfterSeconds } from "./api-error.js";

export interface RetryOptions {
  /** Attempts after the first. Default 2. 0 turns retries off. */
  maxRetries?: number;
  /** First backoff in milliseconds, doubled on each retry, with full jitter. Default 500. */
  baseDelayMs?: number;
  /** No single wait is longer, `Retry-After` included. Default 20 000. */
  maxDelayMs?: number;
  /** How to wait; tests pass a fake clock. */
  sleep?: (ms: number) => Promise<void>;
  /** Jitter source in [0, 1). */
  random?: () => number;
}

/** Statuses that say "try again later" without saying the request was wrong. */
const RETRYABLE_STATUS = new Set([429, 503]);

/**
 * The writes idempotent by their body: `POST /v1/assess` (by the mandate's content: the same
 * mandate answers the same assessment) and `POST /v1/history/transactions` (by each record's
 * id: records already stored are counted unchanged, never stored twice).
 */
const IDEMPOTENT_POSTS = ["/v1/assess", "/v1/history/transactions"];

/**
 * Whether sending the request twice does no harm: reads, the writes idempotent by their body
 * (above), and any write that carries an `Idempotency-Key` (the service answers a repeat from
 * the first attempt).
 */
export function isSafeToRepeat(request: Request): boolean {
  const method = request.method.toUpperCase();
  if (method === "GET" || method === "HEAD") return true;
  if (request.headers.has("idempotency-key")) return true;
  const path = new URL(request.url).pathname.replace(/\/+$/, "");
  return method === "POST" && IDEMPOTENT_POSTS.some((end) => path.endsWith(end));
}

/**
 * Wraps `fetch` so a 429 or 503 answer to a request safe to repeat is retried after
 * `Retry-After` (capped) or an exponential backoff; anything else is returned as it came.
 * The last answer is returned when the retries run out, so the caller sees the real error.
 */
export function retryingFetch(
  fetchImpl: (request: Request) => Promise<Response>,
  options: RetryOptions = {},
): (request: Request) => Promise<Response> {
  const maxRetries = options.maxRetries ?? 2;
  const base = options.baseDelayMs ?? 500;
  const cap = options.maxDelayMs ?? 20_000;
  const sleep = options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
  const random = options.random ?? Math.random;
  return async (request) => {
    const repeatable = maxRetries > 0 && isSafeToRepeat(request);
    for (let attempt = 0; ; attempt++) {
      // A body can be read once: each attempt sends a fresh copy of the original.
      const response = await fetchImpl(repeatable ? request.clone() : request);
      if (!repeatable || attempt >= maxRetries || !RETRYABLE_STATUS.has(response.status)) {
        return response;
      }
      const asked = retryAfterSeconds(response.headers.get("retry-after"));
      const backoff = random() * base * 2 ** attempt;
      await response.body?.cancel();
      await sleep(Math.min(cap, asked === undefined ? backoff : asked * 1000));
    }
  };
}
