import { fillPlaceholders, type Placeholder, sql } from "drizzle-orm";
import type { Batch } from "../auth/tenant";
import type { Database } from "./client";
import { compactSql } from "./compact-sql";

/** A placeholder per named value, carrying the value's type for the caller's values. */
export type Placeholders<P> = { [K in keyof P]: Placeholder<K & string, P[K]> };

/** What drizzle's batch asks of each item once built (`NeonHttpSession.batch`). */
interface Prepared {
  getQuery(): { sql: string; params: unknown[] };
  isResponseInArrayMode(): boolean;
  mapResult(result: unknown, fromBatch?: boolean): unknown;
}

type Built = Batch[number];

/**
 * A hot-path statement built and rendered once per isolate, then run with new values: drizzle
 * walks every column and chunk of a query each time it renders one, which for the context
 * read's statements (the replay lookup's fifty-odd columns) cost more CPU than decoding their
 * answers. Its text is sent compacted (see
 * `compactSql`). `build` names each value by a placeholder;
 * each call fills them in. What it answers is a batch item for `Tenant.batch`, typed as the
 * query `build` makes, and mapped the same way (fields, joins); awaiting it outside a batch is
 * refused rather than silently answering the item itself.
 */
export function preparedOnce<P extends Record<string, unknown>, Q extends Built>(
  build: (db: Database, values: Placeholders<P>) => Q,
): (db: Database, values: P) => Q {
  let prepared: Prepared | undefined;
  const names = new Proxy({} as Placeholders<P>, {
    get: (_, name) => sql.placeholder(String(name)),
  });
  let text: string | undefined;
  return (db, values) => {
    prepared ??= (build(db, names) as unknown as { _prepare(): Prepared })._prepare();
    const once = prepared;
    const rendered = once.getQuery();
    text ??= compactSql(rendered.sql);
    const query = { sql: text, params: fillPlaceholders(rendered.params, values) };
    const item: Prepared = {
      getQuery: () => query,
      isResponseInArrayMode: () => once.isResponseInArrayMode(),
      mapResult: (result, fromBatch) => once.mapResult(result, fromBatch),
    };
    return {
      _prepare: () => item,
      // biome-ignore lint/suspicious/noThenProperty: refuses to be awaited outside a batch
      then: (_: unknown, reject: (error: Error) => void) =>
        reject(new Error("a prepared-once statement runs in a batch")),
    } as unknown as Q;
  };
}
