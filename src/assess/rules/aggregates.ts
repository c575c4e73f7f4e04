import { type SQL, sql } from "drizzle-orm";
import type { AggregateSpec } from "./attributes";

/**
 * Window aggregates (`count.<per>.<window>`, `sum.<per>.<window>`) as SQL, for the backtest as
 * of each replayed assessment. The live assess context counts them in the database function
 * `assess_context` (drizzle/0016_assess_context_history.sql), from the specs it reads there:
 * the same subqueries over the org's payment history (assessed and imported alike), each
 * window ending at the assessment's time.
 */

export interface AggregateScope {
  /** The acting agent's id (uuid or null). */
  agentId: SQL;
  /** The counterparty digest (text or null), as `payments.counterparty` stores it. */
  counterparty: SQL;
  /** The request's currency (text or null): sums add amounts in it only. */
  currency: SQL;
  livemode: SQL;
  /** The exclusive end of the window (a backtest: the assessment's time); none live. */
  until: SQL | null;
}

/*
 * Each window's start must reach the subquery as a value computed outside it (a column of an
 * outer row), never as an expression inside it: under row-level security PostgreSQL will not
 * use a non-leakproof expression (`timestamptz - interval` is one) as an index condition, and
 * would read the subject's whole history instead of the window.
 */

/**
 * The payments of one subject since `since`, as a FROM/WHERE clause over `h`. The live
 * context's copy is in `assess_context` (drizzle/0016_assess_context_history.sql): change both.
 */
function subjectRows(per: AggregateSpec["per"], scope: AggregateScope, since: SQL): SQL {
  const until = scope.until === null ? sql`` : sql` and h.occurred_at < ${scope.until}`;
  const within = sql`h.livemode = ${scope.livemode} and h.occurred_at > ${since}${until}`;
  switch (per) {
    case "agent":
      return sql`from payments h where h.agent_id = ${scope.agentId}::uuid and ${within}`;
    case "principal":
      return sql`from payments h where h.agent_id in (select pa.id from agents pa
          where pa.principal_id = (select pb.principal_id from agents pb
                                   where pb.id = ${scope.agentId}::uuid))
        and ${within}`;
    case "payee":
      return sql`from payments h where h.counterparty = ${scope.counterparty}::text and ${within}`;
  }
}

function sumIn(scope: AggregateScope): SQL {
  return sql`case when ${scope.currency}::text is null then null
    else coalesce(sum(h.amount) filter (where h.currency = ${scope.currency}::text), 0) end`;
}

/** The name of the column holding a window's start, for `aggregatesObject`. */
export function sinceColumn(seconds: number): string {
  return `since_${seconds}`;
}

/**
 * For specs known before the query (a backtest): one plain subquery per aggregate, each window
 * starting at the column `sinceColumn(seconds)` of `row`, which the caller computes. (The
 * dynamic form's estimates over a set-returning function are large enough to trigger JIT
 * compilation on every page.)
 */
export function aggregatesObject(
  specs: readonly AggregateSpec[],
  scope: AggregateScope,
  row: string,
): SQL {
  if (specs.length === 0) return sql`null::jsonb`;
  // jsonb_build_object takes at most 100 arguments: 50 aggregates per call, joined with ||.
  const chunks: SQL[] = [];
  for (let i = 0; i < specs.length; i += 50) {
    const pairs = specs.slice(i, i + 50).map((spec) => {
      const measure = spec.measure === "count" ? sql`count(*)` : sumIn(scope);
      const since = sql.raw(`${row}.${sinceColumn(spec.seconds)}`);
      return sql`${spec.key}::text, (select ${measure} ${subjectRows(spec.per, scope, since)})`;
    });
    chunks.push(sql`jsonb_build_object(${sql.join(pairs, sql`, `)})`);
  }
  return sql.join(chunks, sql` || `);
}

/**
 * The values the model reads: null where the subject is missing (no agent for `agent` and
 * `principal`, no counterparty for `payee`), whatever the database counted for it, and null
 * where nothing was counted for a key: an aggregate that was not counted is unknown, never 0
 * (a `count lt N → approve` rule must not match on a count that never ran).
 */
export function aggregateValues(
  specs: readonly AggregateSpec[],
  counted: Record<string, unknown> | null,
  has: { agent: boolean; counterparty: boolean },
): Record<string, number | null> {
  const values: Record<string, number | null> = {};
  for (const spec of specs) {
    const subject = spec.per === "payee" ? has.counterparty : has.agent;
    const value = counted?.[spec.key];
    values[spec.key] =
      subject && value !== null && value !== undefined && Number.isFinite(Number(value))
        ? Number(value)
        : null;
  }
  return values;
}
