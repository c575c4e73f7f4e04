import { getTableColumns } from "drizzle-orm";
import type { PgTable } from "drizzle-orm/pg-core";

/**
 * A row as JSON keyed by column name, for `json_populate_record` in statements drizzle's
 * builder cannot express (an insert conditional on a reservation in the same statement).
 */
export function columnJson(table: PgTable, row: Record<string, unknown>): string {
  const columns = Object.entries(getTableColumns(table));
  return JSON.stringify(
    Object.fromEntries(columns.map(([key, column]) => [column.name, row[key]])),
  );
}
