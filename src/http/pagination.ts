import { ApiError } from "../errors";
import { base64url, fromBase64url } from "../lib/encoding";
import { isUuid } from "../lib/ids";

// Cursors name the last id of a page. Ids are UUIDv7, so `id < cursor` is keyset pagination in
// creation order, stable under concurrent inserts. Opaque so the encoding can change.
export function encodeCursor(id: string): string {
  return base64url(new TextEncoder().encode(id));
}

export function decodeCursor(cursor: string | undefined): string | null {
  if (cursor === undefined) return null;
  try {
    const id = new TextDecoder().decode(fromBase64url(cursor));
    if (isUuid(id)) return id;
  } catch {
    // fall through to the one answer for every bad cursor
  }
  throw new ApiError("invalid_cursor", [{ path: "cursor", message: "not a cursor from this API" }]);
}

/** Builds the list envelope from `limit + 1` rows fetched newest first. */
export function page<T extends { id: string }>(rows: T[], limit: number) {
  const data = rows.slice(0, limit);
  const hasMore = rows.length > limit;
  const last = data.at(-1);
  return {
    object: "list" as const,
    data,
    has_more: hasMore,
    next_cursor: hasMore && last ? encodeCursor(last.id) : null,
  };
}
