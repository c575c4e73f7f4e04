import { type SQL, sql } from "drizzle-orm";
import type { ModelContext, ModelRow } from "../assess/input";
import { runModel } from "../assess/learned-model";
import type { NormalizedRules } from "../assess/policy";
import { type Decision as Decided, scoreAction, scoreActionWithModel } from "../assess/risk";
import { aggregatesObject, sinceColumn } from "../assess/rules/aggregates";
import {
  heldInputs,
  isRecordedInputs,
  replayInput,
  replaySpecs,
  STORED_CREDENTIAL_COLUMNS,
} from "../assess/rules/inputs";
import {
  type ActionKind,
  DECISIONS,
  type Decision,
  type FeedbackLabel,
} from "../schemas/vocabulary";
import { type LabeledMetrics, LabeledTally } from "./labeled-metrics";

/**
 * Backtesting (docs/rules.md): a policy replayed over the org's assessment history, newest
 * first, with the inputs recorded at the time. History is read in pages through `readPage`,
 * one database round trip each, and folded into a tally of fixed size, so memory does not grow
 * with the history.
 */

/** Rows per page: one round trip each. */
export const PAGE_SIZE = 500;

export interface HistoryRow {
  id: string;
  created: string;
  kind: ActionKind;
  decision: Decision;
  has_counterparty: boolean;
  inputs: unknown;
  /** The stored outcome's credential failure and its reason's words (`StoredCredential`). */
  credential_failure: string | null;
  credential_reason: string | null;
  /** The replayed policy's window aggregates as of the assessment's time. */
  counted: Record<string, unknown> | null;
  /** The assessment's effective label in its mode (docs/feedback.md), or null. */
  label: FeedbackLabel | null;
  /** Only when a risk model is replayed: the payment and the history its features read. */
  amount?: number | null;
  counterparty?: string | null;
  model_agent?: ModelContext["agentPast"];
  model_payee?: ModelContext["payeePast"];
}

/** A risk model replayed beside the policy: its row as the assess path's context reads it. */
export type ReplayedModel = ModelRow;

export interface HistoryQuery {
  livemode: boolean;
  from: string | null;
  to: string | null;
}

/**
 * One page of history, newest first, after `cursor` (an assessment id), with the window
 * aggregates the policy reads counted as the history stood just before each assessment.
 */
export function historyPage(
  rules: NormalizedRules,
  q: HistoryQuery,
  cursor: string | null,
  size: number,
  model: ReplayedModel | null = null,
): SQL {
  const specs = replaySpecs(rules);
  const counted = aggregatesObject(
    specs,
    {
      agentId: sql`p.agent_id`,
      counterparty: sql`p.counterparty`,
      currency: sql`p.currency`,
      livemode: sql`p.livemode`,
      until: sql`p.created_at`,
    },
    "p",
  );
  const windows = [...new Set(specs.map((spec) => spec.seconds))].map(
    (seconds) =>
      sql`a.created_at - make_interval(secs => ${seconds}::int) as ${sql.raw(sinceColumn(seconds))}`,
  );
  const delay = model?.label_delay_seconds ?? 0;
  const modelWindows =
    model === null
      ? sql``
      : sql`, a.amount, a.created_at - interval '30 days' as agent_since,
          a.created_at - make_interval(secs => ${30 * 86_400 + delay}::int) as payee_since`;
  // The model's inputs, as assess_context returns them (drizzle/0016): the agent's payments of
  // 30 days in the currency and the payee's of 30 days plus the label delay, with the time a
  // fraud label on each was known by the assessment's time; the latest 200 of each.
  const modelColumns =
    model === null
      ? sql``
      : sql`, p.amount, p.counterparty,
      (select coalesce(json_agg(json_build_array(r.t, r.amount, r.counterparty) order by r.t),
                       '[]'::json)
         from (select (extract(epoch from h.occurred_at) * 1000)::bigint as t, h.amount,
                      h.counterparty
               from payments h
               where h.agent_id = p.agent_id and h.livemode = p.livemode
                 and h.occurred_at > p.agent_since and h.occurred_at < p.created_at
                 and h.amount is not null and h.currency is not distinct from p.currency
               order by h.occurred_at desc limit 200) r) as model_agent,
      (select coalesce(json_agg(json_build_array(r.t, r.known) order by r.t), '[]'::json)
         from (select (extract(epoch from h.occurred_at) * 1000)::bigint as t,
                      (select (extract(epoch from min(l.known_at)) * 1000)::bigint
                       from payment_labels l
                       where l.payment_id = h.id and l.label in ('fraud', 'chargeback')
                         and l.known_at <= p.created_at) as known
               from payments h
               where h.counterparty = p.counterparty and h.livemode = p.livemode
                 and h.occurred_at > p.payee_since and h.occurred_at < p.created_at
               order by h.occurred_at desc limit 200) r) as model_payee`;
  // The page in a subquery with its LIMIT: the window starts stay columns of its rows.
  // The effective label rides in the page's own query: labels cost no round trip, and the
  // feedback index on (org, assessment) keeps it one index probe per row.
  return sql`select p.id, p.created, p.kind, p.decision, p.has_counterparty, p.inputs,
      p.credential_failure, p.credential_reason, ${counted} as counted,
      (select f.label from assessment_feedback f
        where f.assessment_id = p.id and f.livemode = p.livemode and f.label <> 'dispute'
        order by f.occurred_at desc, f.created_at desc, f.id desc limit 1) as label
      ${modelColumns}
    from (
      select a.id, to_json(a.created_at)#>>'{}' as created, a.created_at, a.kind, a.decision,
        a.counterparty is not null as has_counterparty, a.inputs, ${STORED_CREDENTIAL_COLUMNS},
        a.agent_id, a.counterparty,
        a.currency, a.livemode${windows.length === 0 ? sql`` : sql`, ${sql.join(windows, sql`, `)}`}
        ${modelWindows}
      from assessments a
      where a.livemode = ${q.livemode}
        ${q.from === null ? sql`` : sql`and a.created_at >= ${q.from}::timestamptz`}
        ${q.to === null ? sql`` : sql`and a.created_at <= ${q.to}::timestamptz`}
        ${cursor === null ? sql`` : sql`and a.id < ${cursor}::uuid`}
      order by a.id desc
      limit ${size}
    ) p
    order by p.id desc`;
}

export interface RuleHits {
  id: string;
  action: string;
  hits: number;
}

export interface ChangedSample {
  assessment_id: string;
  created: string;
  decision: Decision;
  replayed_decision: Decision;
  rule: string | null;
  reason: string;
}

export interface BacktestResult {
  replayed: number;
  /** Assessments without recorded inputs (made before they were recorded): not replayed. */
  skipped: number;
  changed: number;
  /** `matrix[recorded][replayed]`: how many assessments went from one decision to the other. */
  matrix: Record<Decision, Record<Decision, number>>;
  rules: RuleHits[];
  /** Replays that no rule of the list matched. */
  unmatched: number;
  samples: ChangedSample[];
  has_more: boolean;
  /** What the recorded decisions and the replayed policy did to labeled assessments. */
  labeled: { recorded: LabeledMetrics; policy: LabeledMetrics };
}

/** Folds replays into a result of fixed size (at most `maxSamples` samples). */
export class BacktestTally {
  readonly result: BacktestResult;
  readonly #recorded = new LabeledTally();
  readonly #policy = new LabeledTally();

  constructor(
    private readonly rules: NormalizedRules,
    private readonly maxSamples: number,
    private readonly model: ReplayedModel | null = null,
  ) {
    const row = () => ({ approve: 0, review: 0, deny: 0 });
    this.result = {
      replayed: 0,
      skipped: 0,
      changed: 0,
      matrix: { approve: row(), review: row(), deny: row() },
      rules: (rules.program?.rules ?? []).map((r) => ({ id: r.id, action: r.action, hits: 0 })),
      unmatched: 0,
      samples: [],
      has_more: false,
      labeled: { recorded: this.#recorded.metrics, policy: this.#policy.metrics },
    };
  }

  add(row: HistoryRow): void {
    const result = this.result;
    const replayed = replayRow(this.rules, row, this.model);
    if (replayed === null) {
      result.skipped++;
      return;
    }
    result.replayed++;
    result.matrix[row.decision][replayed.decision]++;
    this.#recorded.add(row.decision, row.label);
    this.#policy.add(replayed.decision, row.label);
    const hit = replayed.rule ? result.rules[replayed.rule.index] : undefined;
    if (hit) hit.hits++;
    else result.unmatched++;
    if (replayed.decision === row.decision) return;
    result.changed++;
    if (result.samples.length < this.maxSamples) {
      result.samples.push({
        assessment_id: row.id,
        created: new Date(row.created).toISOString(),
        decision: row.decision,
        replayed_decision: replayed.decision,
        rule: replayed.rule?.id ?? null,
        reason: replayed.reason,
      });
    }
  }
}

/**
 * One assessment of the history scored under `rules` from its recorded inputs, holding the
 * facts of history (`heldInputs`); null when it cannot be replayed (no recorded inputs).
 */
export function replayRow(
  rules: NormalizedRules,
  row: HistoryRow,
  model: ReplayedModel | null = null,
): Decided | null {
  if (!isRecordedInputs(row.inputs) || !DECISIONS.includes(row.decision)) return null;
  const recorded = heldInputs(row.inputs, {
    failure: row.credential_failure,
    reason: row.credential_reason,
  });
  const input = replayInput(recorded, row.kind, row.has_counterparty, rules, row.counted);
  const amount = row.amount;
  if (model === null || amount === null || amount === undefined) return scoreAction(input);
  // As the assess path would have run it: the payment at its time, its history then.
  const history: ModelContext = {
    active: model,
    shadow: null,
    agentPast: row.model_agent ?? [],
    payeePast: row.model_payee ?? [],
  };
  const payment = {
    time: Date.parse(row.created),
    amount: Number(amount),
    payee: row.counterparty ?? null,
    // The network's counts as the assessment read them (recorded with its inputs).
    network: input.network ?? null,
  };
  return scoreActionWithModel(input, () => runModel(model, history, payment));
}

export type ReadPage = (cursor: string | null, size: number) => Promise<HistoryRow[]>;

/**
 * Replays up to `limit` assessments, newest first, page by page; `has_more` tells whether the
 * range holds more than the limit.
 */
export async function backtest(
  rules: NormalizedRules,
  readPage: ReadPage,
  options: { limit: number; samples: number; pageSize?: number; model?: ReplayedModel | null },
): Promise<BacktestResult> {
  const pageSize = options.pageSize ?? PAGE_SIZE;
  const tally = new BacktestTally(rules, options.samples, options.model ?? null);
  let cursor: string | null = null;
  let remaining = options.limit;
  while (remaining > 0) {
    // One row beyond the limit tells whether there is more.
    const want = Math.min(pageSize, remaining + 1);
    const rows = await readPage(cursor, want);
    const taken = rows.slice(0, remaining);
    for (const row of taken) tally.add(row);
    remaining -= taken.length;
    if (rows.length < want) break;
    cursor = taken[taken.length - 1]?.id ?? null;
    if (remaining === 0) {
      tally.result.has_more = rows.length > taken.length || (await readPage(cursor, 1)).length > 0;
    }
  }
  return tally.result;
}

/**
 * The aggregate work one call may do: each replayed assessment counts every window aggregate
 * the policy reads over the history before it, so a policy with many aggregates replays fewer
 * assessments per call (the answer's `limits` says how many; `truncated` that more remain).
 */
export const MAX_BACKTEST_AGGREGATE_EVALUATIONS = 500_000;

/** The assessments one call replays at most: the caller's limit, within the aggregate work cap. */
export function rowsWithin(limit: number, aggregates: number): number {
  return Math.min(limit, Math.floor(MAX_BACKTEST_AGGREGATE_EVALUATIONS / Math.max(aggregates, 1)));
}
