import { fillPlaceholders, type Placeholder, type SQL, sql } from "drizzle-orm";
import { PgDialect } from "drizzle-orm/pg-core";
import { PgRaw } from "drizzle-orm/pg-core/query-builders/raw";

const dialect = new PgDialect();

type Placeholders<P> = { [K in keyof P]: Placeholder<K & string> };

/**
 * A statement whose SQL text is rendered once per isolate, for the hot path's largest ones:
 * drizzle walks every chunk of a `sql` template each time it renders one, which for the
 * context read's identity statement (a few hundred chunks) cost more than the statement's
 * answer. The template is built with a placeholder per named value; each call fills them in.
 * The statement it answers is a batch item (`Tenant.batch`), answered as the driver's result.
 */
export function renderedOnce<P extends Record<string, unknown>>(
  build: (values: Placeholders<P>) => SQL,
): (values: P) => PgRaw<unknown> {
  let rendered: { sql: string; params: unknown[] } | undefined;
  const names = new Proxy({} as Placeholders<P>, {
    get: (_, name) => sql.placeholder(String(name)),
  });
  return (values) => {
    rendered ??= dialect.sqlToQuery(build(names));
    const query = { sql: rendered.sql, params: fillPlaceholders(rendered.params, values) };
    return new PgRaw(
      () => Promise.reject(new Error("a statement rendered once runs in a batch")),
      sql.raw(query.sql),
      query,
      (result: unknown) => result,
    );
  };
}
