import { z } from "@hono/zod-openapi";
import { sql } from "drizzle-orm";
import {
  CURRENCY,
  PERIOD_START_SQL,
  REVIEW_THRESHOLD_PERCENT,
  usageChargeSql,
} from "../billing/plans";
import type { Database } from "../db/client";
import { type Placeholders, preparedOnce } from "../db/prepared";
import type { StoredEntry } from "../ledger/ledger-store";
import { newId } from "../lib/ids";
import { isRecordedInputs, type RecordedInputs } from "../rules/inputs";
import { REVIEW_SLA_DEFAULT_SECONDS, ReviewOpening } from "../schemas/reviews";
import { ShadowVerdict } from "../schemas/shadow";
import { AssessmentRecord } from "./outcome";

/**
 * Everything one assessment writes, decided before anything is written. The ledger object
 * makes it in the critical section that sequences the assessment's entry and keeps it beside
 * the entry (its write), so a retry or a racing duplicate writes exactly this and answers
 * exactly this: same ids, same signature. It reads the kept JSON back for its group commit and
 * for a duplicate's answer.
 */
export const PersistPlan = z.object({
  record: AssessmentRecord.omit({ audit_entry_id: true, audit_sequence: true }),
  /** The `mandates` row, as its columns name it. */
  mandate: z.object({
    id: z.string(),
    kind: z.string(),
    mandate_type: z.string().nullable(),
    vct: z.string().nullable(),
    content_hash: z.string(),
    mandate_hash: z.string(),
    mandate: z.record(z.string(), z.unknown()),
  }),
  events: z.array(
    z.object({ id: z.string(), type: z.string(), data: z.record(z.string(), z.unknown()) }),
  ),
  /** What the model read, for backtests; absent from plans made before it was recorded. */
  inputs: z.custom<RecordedInputs>(isRecordedInputs).optional(),
  /** The review item a `review` assessment opens; absent for any other decision. */
  review: ReviewOpening.optional(),
  /**
   * The shadow policy's verdict (`assessments.shadow`): beside the record, so neither the
   * ledger entry's digest nor the Outcome covers it; absent when the org shadows nothing.
   */
  shadow: ShadowVerdict.optional(),
});
export type PersistPlan = z.infer<typeof PersistPlan>;

/**
 * What the ledger object keeps of a plan once Postgres has its write: the record a retry is
 * answered with. The mandate and the inputs are not kept past the write.
 */
export type AnsweredPlan = Pick<PersistPlan, "record" | "review">;

export function recordOf(plan: AnsweredPlan, entry: StoredEntry): AssessmentRecord {
  return { ...plan.record, audit_entry_id: entry.id, audit_sequence: entry.sequence };
}

/**
 * The statement that stores one assessment, run by its org's ledger object in the transaction
 * that writes the assessment's ledger entry (its group commit, shared with the other
 * assessments sequenced meanwhile): the assessment, the mandate, the outbox events (the trigger
 * fans them out to webhook deliveries), the agent's evidence counters and the billing meter
 * (only when this statement inserted the assessment, so a replayed plan never counts or bills
 * twice), and the spend guard's review event. Every insert is idempotent.
 *
 * The spending cap is checked under the same transaction, and a live assessment past it is
 * simply not inserted: the statement never raises, so one refusal cannot fail the other
 * assessments of the group. Its result row says what happened (see `persistedOf`).
 */
export function persistStatement(
  db: Database,
  orgId: string,
  plan: PersistPlan,
  entry: StoredEntry,
) {
  const record = recordOf(plan, entry);
  const { mandate, review } = plan;
  const row = {
    ...record,
    org_id: orgId,
    created_at: record.created,
    agent_id: record.agent?.id ?? null,
    inputs: plan.inputs ?? null,
    shadow: plan.shadow ?? null,
  };
  const mandateRow = {
    id: mandate.id,
    org_id: orgId,
    assessment_id: record.id,
    kind: mandate.kind,
    mandate_type: mandate.mandate_type,
    vct: mandate.vct,
    content_hash: mandate.content_hash,
    mandate_hash: mandate.mandate_hash,
    mandate: mandate.mandate,
    livemode: record.livemode,
    created_at: record.created,
  };
  const eventRows = plan.events.map((e) => ({
    ...e,
    org_id: orgId,
    created_at: record.created,
    livemode: record.livemode,
  }));
  const values: PersistValues = {
    orgId,
    livemode: record.livemode,
    created: record.created,
    contentHash: record.content_hash,
    row: JSON.stringify(row),
    mandateRow: JSON.stringify(mandateRow),
    eventRows: JSON.stringify(eventRows),
    spendReviewEventId: newId(),
    reviewId: review?.id ?? null,
    reviewSpend: review?.spend ? JSON.stringify(review.spend) : null,
  };
  return (review ? persistOpeningReview : persistAlone)(db, values);
}

// A type, not an interface: preparedOnce takes a record of values.
type PersistValues = {
  orgId: string;
  livemode: boolean;
  created: string;
  contentHash: string;
  /** JSON of the `assessments`, `mandates` and `events` rows. */
  row: string;
  mandateRow: string;
  eventRows: string;
  spendReviewEventId: string;
  reviewId: string | null;
  reviewSpend: string | null;
};

// Rendered once per isolate in each of its two shapes (with and without a review item to open):
// drizzle rendering this statement anew cost about 60 us per assessment.
const persistOf = (opensReview: boolean) =>
  preparedOnce((db, v: Placeholders<PersistValues>) =>
    db.execute<{ inserted: string | null; stored: string | null }>(sql`
    with refused as (
      -- A live assessment past the cap; the meter row is this org's, written only here.
      select ${v.livemode}::boolean and coalesce((
        select ${usageChargeSql(sql`b.plan`, sql`coalesce(u.assessments, 0) + 1`)} > b.spending_cap
        from billing_accounts b
        left join billing_usage u on u.period_start = ${PERIOD_START_SQL}
        where b.spending_cap is not null), false) as over
    ),
    ins as (
      insert into assessments
      select * from json_populate_record(null::assessments, ${v.row}::json)
      where not (select over from refused)
      on conflict do nothing
      returning id, agent_id, decision, livemode, inputs
    ),
    -- Everything else only with the assessment itself: a plan that loses to another request
    -- (a reused idempotency key) or to the cap leaves no mandate, no event and no count behind.
    m as (
      insert into mandates
      select * from json_populate_record(null::mandates, ${v.mandateRow}::json)
      where exists (select 1 from ins)
      on conflict do nothing
    ),
    ev as (
      insert into events
      select * from json_populate_recordset(null::events, ${v.eventRows}::json)
      where exists (select 1 from ins)
      on conflict do nothing
    ),
    -- The meter: one billable (live) assessment, counted only by the statement that inserted it.
    meter as (
      insert into billing_usage (period_start, assessments)
      select ${PERIOD_START_SQL}, 1 from ins where ins.livemode
      on conflict (org_id, period_start) do update
        set assessments = billing_usage.assessments + 1, updated_at = now()
      returning period_start, assessments
    ),
    -- The spend guard's warning: usage past the review threshold of the cap, once per period
    -- and cap (the dedupe key), delivered as a webhook like every event.
    spend as (
      select m.period_start, m.assessments, b.plan, b.spending_cap,
             ${usageChargeSql(sql`b.plan`, sql`m.assessments`)} as amount_due
      from meter m join billing_accounts b on b.spending_cap is not null
    ),
    review as (
      insert into events (id, type, data, livemode, dedupe_key)
      select ${v.spendReviewEventId}::uuid, 'spend.review_required',
        jsonb_build_object('period_start', s.period_start, 'spending_cap', s.spending_cap,
          'amount_due', s.amount_due, 'currency', ${CURRENCY}::text,
          'assessments', s.assessments, 'plan', s.plan,
          'threshold_percent', ${REVIEW_THRESHOLD_PERCENT}::int),
        true,
        'spend.review_required:' || s.period_start || ':' || s.spending_cap || ':'
          || ${REVIEW_THRESHOLD_PERCENT}::int
      from spend s
      where s.amount_due > 0 and s.amount_due * 100 >= s.spending_cap * ${REVIEW_THRESHOLD_PERCENT}::int
      on conflict do nothing
    ),
    -- Test-mode assessments are no evidence about an agent's live trust, nor is an assessment
    -- that named the agent without proof of possession (identity.proven not true: a claim).
    -- A review assessment opens its review item here, with the assessment, so no review is ever
    -- missing and a replayed plan (nothing inserted) never opens a second one.
    ${opensReview ? reviewOpening(v) : sql``}
    counted as (
      update agents a set
        approvals = a.approvals + (ins.decision = 'approve')::int,
        reviews = a.reviews + (ins.decision = 'review')::int,
        denials = a.denials + (ins.decision = 'deny')::int,
        trust_reason = 'assessment'
      from ins where a.id = ins.agent_id and ins.livemode
        and coalesce((ins.inputs->'identity'->>'proven')::boolean, false)
    )
    select (select id from ins) as inserted,
      coalesce((select id from ins),
        (select id from assessments where content_hash = ${v.contentHash})) as stored`),
  );
const persistOpeningReview = persistOf(true);
const persistAlone = persistOf(false);

/** The CTE that opens the plan's review item, due after the org's SLA (or the default). */
function reviewOpening(v: Placeholders<PersistValues>) {
  return sql`opened as (
      insert into reviews (id, org_id, assessment_id, livemode, agent_id, created_at, expires_at, spend)
      select ${v.reviewId}::uuid, ${v.orgId}::uuid, ins.id, ins.livemode, ins.agent_id,
        ${v.created}::timestamptz,
        ${v.created}::timestamptz + make_interval(secs => coalesce(
          (select s.sla_seconds from review_settings s), ${REVIEW_SLA_DEFAULT_SECONDS}::int)),
        ${v.reviewSpend}::jsonb
      from ins where ins.decision = 'review'
      on conflict do nothing
    ),`;
}

/**
 * What the statement did: `stored` (this plan's assessment is in the database, inserted now or
 * by an earlier write of the same plan), `other` (another assessment holds its content or key:
 * a lost race), or `refused` (the spending cap).
 */
export function persistedOf(result: unknown, plan: PersistPlan): "stored" | "other" | "refused" {
  const row = (result as { rows: { inserted: string | null; stored: string | null }[] }).rows[0];
  if (row?.stored === plan.record.id) return "stored";
  return row?.stored ? "other" : "refused";
}
