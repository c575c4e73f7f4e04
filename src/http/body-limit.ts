import type { MiddlewareHandler } from "hono";
import { ApiError } from "../errors";
import type { AppEnv } from "./context";

/** Request bodies larger than this are refused before they are parsed (documented in docs/api.md). */
export const MAX_BODY_BYTES = 256 * 1024;

/**
 * The routes that take more, by operation (`METHOD /path`), each with its reason (docs/api.md,
 * Limits). A history import carries up to 10,000 records (docs/history.md): about 350 bytes
 * each as an org typically sends them (3.5 MB a call), and 16 MiB admits 1.6 KiB each, every
 * text field near its maximum.
 */
export const ROUTE_BODY_BYTES: Readonly<Record<string, number>> = {
  "POST /v1/history/transactions": 16 * 1024 * 1024,
};

/** The body limit of an operation: its own, else MAX_BODY_BYTES. */
export function bodyLimitOf(method: string, path: string): number {
  return ROUTE_BODY_BYTES[`${method.toUpperCase()} ${path}`] ?? MAX_BODY_BYTES;
}

/** A limit as the 413's message and the document say it: `256 KiB`, `16 MiB`. */
export function sizeText(bytes: number): string {
  return bytes >= 1024 * 1024 ? `${bytes / (1024 * 1024)} MiB` : `${bytes / 1024} KiB`;
}

/**
 * How much of a body past the limit is read and thrown away before the 413 is answered. A
 * server that answers while the client is still sending, having read part of the body, breaks
 * the upload: most clients then report a reset connection instead of the answer, and
 * `wrangler dev`'s proxy answers its own 503 ("Your worker restarted mid-request"); workerd
 * refuses to read a request body once the response is sent, so it cannot be drained later.
 * Reading on (keeping nothing) lets the answer arrive; past this, the stream is cancelled and
 * the client gets what its connection makes of that.
 */
export const DISCARD_BYTES = 8 * 1024 * 1024;

function tooLarge(limit: number): ApiError {
  if (limit === MAX_BODY_BYTES) return new ApiError("request_too_large", { max_bytes: limit });
  return new ApiError(
    "request_too_large",
    { max_bytes: limit },
    { message: `The request body is larger than ${sizeText(limit)}: send a smaller body.` },
  );
}

/** Reads and drops up to `bytes` more of the stream, then cancels what is left of it. */
async function discard(reader: ReadableStreamDefaultReader<Uint8Array>, bytes: number) {
  let dropped = 0;
  try {
    while (dropped <= bytes) {
      const { done, value } = await reader.read();
      if (done) return;
      dropped += value.byteLength;
    }
    await reader.cancel();
  } catch {
    // The client went away: nobody is waiting for the answer.
  }
}

/**
 * The body, if it has at most `limit` bytes; null as soon as it has more. Never holds more than
 * `limit` bytes (plus the chunk that crossed it), however long the stream.
 */
async function readAtMost(
  body: ReadableStream<Uint8Array>,
  limit: number,
): Promise<Uint8Array | null> {
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await discard(reader, DISCARD_BYTES);
      return null;
    }
    chunks.push(value);
  }
  const whole = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    whole.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return whole;
}

/**
 * 413 `request_too_large` for a body over the route's limit (MAX_BODY_BYTES unless
 * ROUTE_BODY_BYTES names the route), however it is framed. A declared
 * `Content-Length` is HTTP's framing, which the runtime holds the body to: one over the limit is
 * refused unread, one within it passes as it is. A body without one (chunked, or a stream) is
 * read here up to the limit and handed on as bytes, so no route ever reads an unbounded stream.
 */
export const bodyLimit: MiddlewareHandler<AppEnv> = async (c, next) => {
  const body = c.req.raw.body;
  if (!body) return next();
  const limit = bodyLimitOf(c.req.method, c.req.path);
  const declared = c.req.header("content-length");
  if (declared !== undefined && c.req.header("transfer-encoding") === undefined) {
    if (Number(declared) > limit) throw tooLarge(limit);
    return next();
  }
  const bytes = await readAtMost(body, limit);
  if (bytes === null) throw tooLarge(limit);
  c.req.raw = new Request(c.req.raw, { body: bytes });
  return next();
};
