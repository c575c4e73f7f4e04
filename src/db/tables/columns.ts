import { type SQL, sql } from "drizzle-orm";
import { type AnyPgColumn, check, integer, timestamp } from "drizzle-orm/pg-core";

/**
 * Org-scoped rows default their `org_id` to the tenant set for the transaction, so route code
 * never passes it and cannot pass the wrong one; RLS `WITH CHECK` rejects anything else.
 */
export const currentOrg = sql`nullif(current_setting('app.org_id', true), '')::uuid`;

/** When a row was made, stamped by the database. */
export const createdAt = () =>
  timestamp("created_at", { withTimezone: true }).notNull().defaultNow();

/**
 * `created_at` to the millisecond, for rows a list pages through by (created, id): the keyset
 * cursor carries a JavaScript Date, which holds no more. Stamped by the code that writes the
 * row (it names the instant elsewhere too) unless the table adds `.defaultNow()`.
 */
export const createdAtMs = () =>
  timestamp("created_at", { withTimezone: true, precision: 3 }).notNull();

/** `'a', 'b'`: a list of our own constants (never input) as SQL literals. */
function literals(values: readonly string[]): SQL {
  return sql.raw(values.map((value) => `'${value}'`).join(", "));
}

/**
 * The CHECK that keeps a text column to one list: the same list its `text({ enum })` types,
 * so the database and the code cannot drift apart. (Drizzle's `enum` only types the column.)
 */
export function oneOf(name: string, column: AnyPgColumn, values: readonly string[]) {
  return check(name, sql`${column} in (${literals(values)})`);
}

/**
 * Where a revocable thing the service issues (an agent, an agent key, an action grant) sits in
 * its org's status lists (src/status-lists/places.ts): the list and the index, taken from the
 * sequence of the ledger entry that created it. Both null on rows made before places existed.
 */
export const statusPlace = () => ({
  statusList: integer("status_list"),
  statusIdx: integer("status_idx"),
});

/** A place is both columns or neither. */
export function statusPlaceCheck(
  name: string,
  t: { statusList: AnyPgColumn; statusIdx: AnyPgColumn },
) {
  return check(name, sql`(${t.statusList} is null) = (${t.statusIdx} is null)`);
}
