import { type SQL, sql } from "drizzle-orm";
import type { Tenant } from "../auth/tenant";
import { sqlState } from "../db/client";
import { ApiError } from "../errors";
import { type AssessmentsBreakdown, SCORE_BINS, TOP } from "../schemas/assessments-breakdown";
import { agentCondition, type SummaryWindow } from "./summary";

/**
 * The breakdown of one mode's assessments over a window (docs/assess.md, "Breakdown"): the
 * decisions and their rates, the score histogram by decision, the top signals and rejection
 * reasons, the period's assessments against their effective labels (fraud caught and missed,
 * with amounts per currency), and the top payees and agents by volume and by risk. One
 * statement, one round trip: the window's rows are read once through the index
 * (org, livemode, created_at) into a materialized CTE that every part aggregates.
 */

type Body = Omit<AssessmentsBreakdown, "object" | "livemode" | "from" | "to" | "tz">;

interface Amount {
  currency: string;
  amount: number | string;
}

interface TrafficRow {
  count: number;
  amounts: Amount[] | null;
  approve: number;
  review: number;
  deny: number;
  mean_score: number | string;
}

interface Row {
  decisions: { approve: number; review: number; deny: number; total: number };
  histogram: { bin: number; approve: number; review: number; deny: number }[] | null;
  signals: { code: string; category: string; count: number }[] | null;
  reasons: { code: string; category: string; count: number }[] | null;
  labels: { labeled: number; fraud: number; legitimate: number; legitimate_flagged: number };
  fraud:
    | { caught: boolean; count: number; currency: string | null; amount: number | string }[]
    | null;
  payees:
    | (TrafficRow & {
        list: "volume" | "risk";
        key: string;
        id: string | null;
        name: string | null;
      })[]
    | null;
  agents: (TrafficRow & { list: "volume" | "risk"; key: string; name: string | null })[] | null;
}

/**
 * The per-key traffic of `column` (counterparty or agent) and its two top lists. Amounts are
 * summed per currency first, then gathered per key; `sample` is one content hash of the key's
 * assessments, through which a payee's id and name are read from its stored mandate.
 */
function ranked(column: "counterparty" | "agent_id") {
  const key = sql.raw(`m.${column}`);
  return sql`per_currency as (
      select ${key}::text as key, m.currency, count(*)::int as n, sum(m.amount) as amount,
        (count(*) filter (where m.decision = 'approve'))::int as approve,
        (count(*) filter (where m.decision = 'review'))::int as review,
        (count(*) filter (where m.decision = 'deny'))::int as deny,
        sum(m.risk_score) as score, min(m.content_hash) as sample
      from made m where ${key} is not null group by 1, 2
    ), per_key as (
      select key, sum(n)::int as count, sum(approve)::int as approve, sum(review)::int as review,
        sum(deny)::int as deny, round(sum(score) / sum(n), 1)::float8 as mean_score,
        min(sample) as sample,
        json_agg(json_build_object('currency', currency, 'amount', amount::text) order by currency)
          filter (where currency is not null and amount is not null) as amounts
      from per_currency group by key
    ), top as (
      (select 'volume' as list, row_number() over (order by p.count desc, p.key) as rank, p.*
        from per_key p order by rank limit ${TOP})
      union all
      (select 'risk' as list,
          row_number() over (order by p.review + p.deny desc, p.mean_score desc, p.key) as rank, p.*
        from per_key p order by rank limit ${TOP})
    )`;
}

/** The one statement (exported for the scale test's plan). */
export function breakdownStatement(window: SummaryWindow, livemode: boolean): SQL {
  const from = sql`${window.from}::timestamptz`;
  const to = sql`${window.to}::timestamptz`;
  const bins = SCORE_BINS - 1;
  // Each code once per assessment (count distinct), over the rows that carry any.
  const topCodes = (column: string, code: string) => sql`(
      select json_agg(t order by t.count desc, t.code) from (
        select x->>${code} as code, min(x->>'category') as category,
          count(distinct m.id)::int as count
        from made m, jsonb_array_elements(m.${sql.raw(column)}) x
        where m.${sql.raw(column)} <> '[]'::jsonb
        group by 1 order by 3 desc, 1 limit ${TOP}) t)`;
  const listOf = (cte: string, fields: SQL) => sql`(
      select json_agg(json_build_object(${fields}) order by t.list, t.rank)
      from ${sql.raw(cte)} t
      ${
        // One probe per listed row (20 at most), by the unique (org, content_hash) and the key.
        cte === "payee_top"
          ? sql`left join lateral (select x.mandate from mandates x
              where x.content_hash = t.sample limit 1) md on true`
          : sql`left join lateral (select x.name from agents x
              where x.id = t.key::uuid) ag on true`
      })`;
  const traffic = sql`'list', t.list, 'key', t.key, 'count', t.count,
    'amounts', t.amounts, 'approve', t.approve, 'review', t.review, 'deny', t.deny,
    'mean_score', t.mean_score`;
  const named = (sub: string) => sql.raw(sub);
  // The payee's id and name come from the mandate as stored: a payment's `payee`, or a
  // message's recipient (`to`, `recipient`, `phone`: the first that is a string, as the assess
  // path reads it); erasure nulls a recipient, never a payee.
  const payeeFields = sql`${traffic},
    'id', coalesce(md.mandate->'payee'->>'id', ${named(recipient())}),
    'name', md.mandate->'payee'->>'name'`;
  const agentFields = sql`${traffic}, 'name', ag.name`;
  return sql`with made as materialized (
      select a.id, a.decision, a.risk_score, a.agent_id, a.counterparty, a.amount, a.currency,
        a.signals, a.rejection_reasons, a.content_hash,
        -- The effective label (docs/feedback.md): one probe of the feedback index
        -- (org, assessment) per row. A join to the feedback rows was planned as a nested loop
        -- over the CTE (seconds at 10,000 rows on PGlite). No condition on livemode: a label's
        -- is its assessment's, and naming it let the planner probe (org, livemode, label) instead.
        (select f.label from assessment_feedback f
          where f.assessment_id = a.id and f.label <> 'dispute'
          order by f.occurred_at desc, f.created_at desc, f.id desc limit 1) as label
      from assessments a
      where a.livemode = ${livemode} and a.created_at >= ${from} and a.created_at < ${to}
        ${agentCondition(window)}
    ), labeled as (
      select m.decision, m.amount, m.currency, m.label,
        m.label in ('fraud', 'chargeback') as fraud
      from made m where m.label is not null
    ), payee_top as (
      with ${ranked("counterparty")} select * from top
    ), agent_top as (
      with ${ranked("agent_id")} select * from top
    )
    select
      (select json_build_object(
        'approve', count(*) filter (where m.decision = 'approve'),
        'review', count(*) filter (where m.decision = 'review'),
        'deny', count(*) filter (where m.decision = 'deny'),
        'total', count(*)) from made m) as decisions,
      (select json_agg(h order by h.bin) from (
        select least(m.risk_score / 10, ${bins}) as bin,
          count(*) filter (where m.decision = 'approve') as approve,
          count(*) filter (where m.decision = 'review') as review,
          count(*) filter (where m.decision = 'deny') as deny
        from made m group by 1) h) as histogram,
      ${topCodes("signals", "type")} as signals,
      ${topCodes("rejection_reasons", "key")} as reasons,
      (select json_build_object(
        'labeled', count(*),
        'fraud', count(*) filter (where l.fraud),
        'legitimate', count(*) filter (where l.label = 'legitimate'),
        'legitimate_flagged', count(*) filter (where l.label = 'legitimate' and l.decision <> 'approve'))
        from labeled l) as labels,
      (select json_agg(f) from (
        select l.decision <> 'approve' as caught, l.currency, count(*)::int as count,
          coalesce(sum(l.amount), 0)::text as amount
        from labeled l where l.fraud group by 1, 2) f) as fraud,
      ${listOf("payee_top", payeeFields)} as payees,
      ${listOf("agent_top", agentFields)} as agents`;
}

function recipient(): string {
  const member = (name: string) =>
    `when jsonb_typeof(md.mandate->'${name}') = 'string' then md.mandate->>'${name}'`;
  return `case ${["to", "recipient", "phone"].map(member).join(" ")} end`;
}

/** The breakdown of the caller's mode over the window. */
export async function assessmentsBreakdown(tenant: Tenant, window: SummaryWindow): Promise<Body> {
  try {
    const [result] = await tenant.batch((db) => [
      db.execute(breakdownStatement(window, tenant.livemode)),
    ]);
    const [row] = (result as unknown as { rows: Row[] }).rows;
    if (!row) throw new Error("the breakdown statement answered no row");
    return fold(row);
  } catch (error) {
    if (sqlState(error) !== "22023") throw error;
    throw new ApiError("invalid_request", [
      { path: "tz", message: "unknown to the database's time zone data", code: "custom" },
    ]);
  }
}

/** The statement's one row as the answer: every bin and rate present, amounts as numbers. */
export function fold(row: Row): Body {
  const { approve, review, deny, total } = row.decisions;
  const bins = new Map((row.histogram ?? []).map((h) => [h.bin, h]));
  const amounts = (list: Amount[] | null) =>
    (list ?? []).map((a) => ({ currency: a.currency, amount: Number(a.amount) }));
  const traffic = (t: TrafficRow) => ({
    count: t.count,
    amounts: amounts(t.amounts),
    approve: t.approve,
    review: t.review,
    deny: t.deny,
    flagged_rate: ratio(t.review + t.deny, t.count) ?? 0,
    mean_score: Number(t.mean_score),
  });
  const fraud = (caught: boolean) => {
    const rows = (row.fraud ?? []).filter((f) => f.caught === caught);
    return {
      count: rows.reduce((sum, f) => sum + f.count, 0),
      amounts: rows
        .filter((f): f is typeof f & { currency: string } => f.currency !== null)
        .map((f) => ({ currency: f.currency, amount: Number(f.amount) }))
        .filter((a) => a.amount !== 0)
        .sort((a, b) => (a.currency < b.currency ? -1 : a.currency > b.currency ? 1 : 0)),
    };
  };
  const payees = (list: "volume" | "risk") =>
    (row.payees ?? [])
      .filter((p) => p.list === list)
      .map((p) => ({ counterparty: p.key, id: p.id, name: p.name, ...traffic(p) }));
  const agents = (list: "volume" | "risk") =>
    (row.agents ?? [])
      .filter((a) => a.list === list)
      .map((a) => ({ id: a.key, name: a.name, ...traffic(a) }));
  return {
    decisions: {
      approve,
      review,
      deny,
      total,
      rates: {
        approve: ratio(approve, total),
        review: ratio(review, total),
        deny: ratio(deny, total),
      },
    },
    score_histogram: Array.from({ length: SCORE_BINS }, (_, bin) => {
      const h = bins.get(bin);
      const counts = { approve: h?.approve ?? 0, review: h?.review ?? 0, deny: h?.deny ?? 0 };
      return {
        min: bin * 10,
        max: bin === SCORE_BINS - 1 ? 100 : bin * 10 + 9,
        ...counts,
        total: counts.approve + counts.review + counts.deny,
      };
    }),
    top_signals: row.signals ?? [],
    top_rejection_reasons: row.reasons ?? [],
    labels: {
      ...row.labels,
      fraud_rate: ratio(row.labels.fraud, total),
      fraud_caught: fraud(true),
      fraud_missed: fraud(false),
    },
    payees: { by_volume: payees("volume"), by_risk: payees("risk") },
    agents: { by_volume: agents("volume"), by_risk: agents("risk") },
  };
}

function ratio(part: number, whole: number): number | null {
  return whole === 0 ? null : Math.round((part / whole) * 10_000) / 10_000;
}
