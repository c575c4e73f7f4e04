import { ApiError } from "../errors";
import { base64url, fromBase64url } from "../lib/encoding";
import { isUuid } from "../lib/ids";
import { LATEST_TIME_MS } from "../schemas/common";

// A cursor names the last key of a page (a UUIDv7 id, or a ledger sequence): `key < cursor` is
// keyset pagination in creation order, stable under concurrent inserts. Opaque on the wire so
// the encoding can change.
export function encodeCursor(key: string | number): string {
  return base64url(new TextEncoder().encode(String(key)));
}

function decode(cursor: string): string | null {
  try {
    return new TextDecoder().decode(fromBase64url(cursor));
  } catch {
    return null;
  }
}

function invalid(): ApiError {
  return new ApiError("invalid_cursor", [
    { path: "cursor", message: "not a cursor from this API" },
  ]);
}

export function decodeIdCursor(cursor: string | undefined): string | null {
  if (cursor === undefined) return null;
  const id = decode(cursor);
  if (id === null || !isUuid(id)) throw invalid();
  return id;
}

export function decodeSequenceCursor(cursor: string | undefined): number | null {
  if (cursor === undefined) return null;
  const text = decode(cursor);
  if (text === null || !/^[1-9][0-9]{0,15}$/.test(text)) throw invalid();
  return Number(text);
}

/** Builds the list envelope from `limit + 1` rows fetched newest first. */
export function page<T>(rows: T[], limit: number, keyOf: (row: T) => string | number) {
  const data = rows.slice(0, limit);
  const hasMore = rows.length > limit;
  const last = data.at(-1);
  return {
    object: "list" as const,
    data,
    has_more: hasMore,
    next_cursor: hasMore && last !== undefined ? encodeCursor(keyOf(last)) : null,
  };
}

/** A cursor of rows ordered by (time, key) descending: the last row's millisecond time and key. */
export function encodeTimeCursor(time: Date, key: string): string {
  return encodeCursor(`${time.getTime()}:${key}`);
}

export function decodeTimeCursor(cursor: string | undefined): { time: Date; key: string } | null {
  if (cursor === undefined) return null;
  const match = /^([0-9]{1,15}):([A-Za-z0-9_-]{1,100})$/.exec(decode(cursor) ?? "");
  if (!match?.[1] || !match[2]) throw invalid();
  const ms = Number(match[1]);
  if (ms > LATEST_TIME_MS) throw invalid();
  return { time: new Date(ms), key: match[2] };
}
