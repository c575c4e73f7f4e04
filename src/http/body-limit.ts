import type { MiddlewareHandler } from "hono";
import { ApiError } from "../errors";
import type { AppEnv } from "./context";

/** Request bodies larger than this are refused before they are parsed (documented in docs/api.md). */
export const MAX_BODY_BYTES = 256 * 1024;

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

function tooLarge(): ApiError {
  return new ApiError("request_too_large", { max_bytes: MAX_BODY_BYTES });
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
 * 413 `request_too_large` for a body over MAX_BODY_BYTES, however it is framed. A declared
 * `Content-Length` is HTTP's framing, which the runtime holds the body to: one over the limit is
 * refused unread, one within it passes as it is. A body without one (chunked, or a stream) is
 * read here up to the limit and handed on as bytes, so no route ever reads an unbounded stream.
 */
export const bodyLimit: MiddlewareHandler<AppEnv> = async (c, next) => {
  const body = c.req.raw.body;
  if (!body) return next();
  const declared = c.req.header("content-length");
  if (declared !== undefined && c.req.header("transfer-encoding") === undefined) {
    if (Number(declared) > MAX_BODY_BYTES) throw tooLarge();
    return next();
  }
  const bytes = await readAtMost(body, MAX_BODY_BYTES);
  if (bytes === null) throw tooLarge();
  c.req.raw = new Request(c.req.raw, { body: bytes });
  return next();
};
