import { sql } from "drizzle-orm";
import type { Tenant } from "../auth/tenant";
import { sqlState } from "../db/client";
import { ApiError } from "../errors";
import type { AssessmentsSummary } from "../schemas/assessments-summary";

/**
 * The per-day summary of one mode's assessments (docs/assess.md, "Summary"): counts by decision
 * as recorded (a review's later resolution does not move it) and percentiles of the stored
 * `latency_ms`, for every day of the window (in its time zone) and for the whole window, in one
 * statement.
 */

export interface SummaryWindow {
  /** ISO instants, `from` inclusive, `to` exclusive. */
  from: string;
  to: string;
  /** The IANA zone whose days the assessments are counted in. */
  tz: string;
  /** Only this agent's assessments (read through the index (org, agent_id, created_at)). */
  agent?: string | null;
}

/** The window's condition on the agent, when it names one. */
export function agentCondition(window: SummaryWindow) {
  return window.agent ? sql`and a.agent_id = ${window.agent}::uuid` : sql``;
}

interface SummaryRow {
  date: string | null;
  approve: number | string;
  review: number | string;
  deny: number | string;
  total: number | string;
  p50: number | string | null;
  p99: number | string | null;
}

type Body = Pick<AssessmentsSummary, "days" | "totals">;

/**
 * Every day of the window left-joined to its assessments, so a day without any still has its
 * row (the chart's axis stays continuous); the grouping set `()` adds the window's totals. The
 * window is read through the index (org, livemode, created_at), RLS supplying the org (when the
 * window holds all of the mode's history, the planner may take (org, livemode) from another
 * index: the same rows). Days are the zone's: the series runs over its wall clock (`timestamp`,
 * not `timestamptz`), so the session's time zone cannot skew it and a day that daylight saving
 * shortens is still one day.
 */
function statement(window: SummaryWindow, livemode: boolean) {
  const from = sql`${window.from}::timestamptz`;
  const to = sql`${window.to}::timestamptz`;
  const zone = sql`${window.tz}::text`;
  const percentile = (p: number) =>
    sql.raw(
      `round((percentile_cont(${p}) within group (order by m.latency_ms))::numeric, 1)::float8`,
    );
  return sql`with made as (
      select (a.created_at at time zone ${zone})::date as day, a.decision, a.latency_ms
      from assessments a
      where a.livemode = ${livemode} and a.created_at >= ${from} and a.created_at < ${to}
        ${agentCondition(window)}
    ), days as (
      select d::date as day
      from generate_series(
        date_trunc('day', ${from} at time zone ${zone}),
        date_trunc('day', (${to} - interval '1 millisecond') at time zone ${zone}),
        interval '1 day') d
    )
    select case when grouping(days.day) = 0 then to_char(days.day, 'YYYY-MM-DD') end as date,
      (count(*) filter (where m.decision = 'approve'))::int as approve,
      (count(*) filter (where m.decision = 'review'))::int as review,
      (count(*) filter (where m.decision = 'deny'))::int as deny,
      count(m.decision)::int as total,
      ${percentile(0.5)} as p50,
      ${percentile(0.99)} as p99
    from days left join made m on m.day = days.day
    group by grouping sets ((days.day), ())
    order by grouping(days.day), days.day`;
}

/** The summary of the caller's mode over the window. */
export async function assessmentsSummary(tenant: Tenant, window: SummaryWindow): Promise<Body> {
  try {
    const [result] = await tenant.batch((db) => [db.execute(statement(window, tenant.livemode))]);
    return fold((result as unknown as { rows: SummaryRow[] }).rows);
  } catch (error) {
    // The runtime's ICU knew the zone and the database's tzdata does not (a newer zone): the
    // only invalid parameter value this statement can meet.
    if (sqlState(error) !== "22023") throw error;
    throw new ApiError("invalid_request", [
      { path: "tz", message: "unknown to the database's time zone data", code: "custom" },
    ]);
  }
}

/** The statement's rows as the answer: the day rows in order, then the one totals row. */
export function fold(rows: SummaryRow[]): Body {
  const counts = (row: SummaryRow) => ({
    approve: Number(row.approve),
    review: Number(row.review),
    deny: Number(row.deny),
    total: Number(row.total),
    latency_ms: { p50: numberOrNull(row.p50), p99: numberOrNull(row.p99) },
  });
  const days = rows.flatMap((row) =>
    row.date === null ? [] : [{ date: row.date, ...counts(row) }],
  );
  const total = rows.find((row) => row.date === null);
  if (!total) throw new Error("the summary statement answered no totals row");
  const totals = counts(total);
  return {
    days,
    totals: {
      approve: totals.approve,
      review: totals.review,
      deny: totals.deny,
      total: totals.total,
      approval_rate: ratio(totals.approve, totals.total),
      latency_ms: totals.latency_ms,
    },
  };
}

function numberOrNull(value: number | string | null): number | null {
  return value === null ? null : Number(value);
}

function ratio(part: number, whole: number): number | null {
  return whole === 0 ? null : Math.round((part / whole) * 10_000) / 10_000;
}
