import { and, desc, eq, lt, type SQL } from "drizzle-orm";
import type { AnyPgColumn, PgTable } from "drizzle-orm/pg-core";
import { base64url, fromBase64url } from "#audit/encoding";
import type { Tenant } from "../auth/tenant";
import { ApiError, orNotFound } from "../errors";
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

/** The list envelope (Stripe's): a page of items and the cursor of the next. */
export interface Page<T> {
  object: "list";
  data: T[];
  has_more: boolean;
  next_cursor: string | null;
}

/** Builds the list envelope from `limit + 1` rows fetched newest first. */
export function page<T>(rows: T[], limit: number, keyOf: (row: T) => string | number): Page<T> {
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

/** A table keyed by a UUIDv7 `id`, which keyset lists page through newest first. */
type IdTable = PgTable & { id: AnyPgColumn };

/**
 * The caller's mode, for a table that has one: test and live data never meet (a table without
 * `livemode` holds what both modes share, such as agents and policies).
 */
function sameMode(tenant: Tenant, table: IdTable): SQL | undefined {
  const livemode = (table as IdTable & { livemode?: AnyPgColumn }).livemode;
  return livemode ? eq(livemode, tenant.livemode) : undefined;
}

/** One row of `table` by id in the caller's org and mode (plus any filters), or 404. */
export async function getById<T extends IdTable>(
  tenant: Tenant,
  table: T,
  id: string,
  ...filters: (SQL | undefined)[]
): Promise<T["$inferSelect"]> {
  const [rows] = await tenant.batch((db) => [
    db
      .select()
      .from(table as PgTable)
      .where(and(eq(table.id, id), sameMode(tenant, table), ...filters)),
  ]);
  return orNotFound(rows[0] as T["$inferSelect"] | undefined);
}

/**
 * A page of `table` in the caller's org and mode, newest first, after the cursor and under the filters, in the list
 * envelope: one round trip (which also authenticates), `limit + 1` rows to know `has_more`.
 */
export async function listById<T extends IdTable>(
  tenant: Tenant,
  table: T,
  query: { limit: number; cursor?: string | undefined },
  ...filters: (SQL | undefined)[]
): Promise<Page<T["$inferSelect"]>> {
  const after = decodeIdCursor(query.cursor);
  const [rows] = await tenant.batch((db) => [
    db
      .select()
      .from(table as PgTable)
      .where(and(after ? lt(table.id, after) : undefined, sameMode(tenant, table), ...filters))
      .orderBy(desc(table.id))
      .limit(query.limit + 1),
  ]);
  return page(rows as T["$inferSelect"][], query.limit, (row) => row.id as string);
}

/** The same page with each item presented as the API shows it. */
export function mapPage<T, U>(list: Page<T>, present: (item: T) => U): Page<U> {
  return { ...list, data: list.data.map(present) };
}
