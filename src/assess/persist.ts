import { z } from "@hono/zod-openapi";
import { sql } from "drizzle-orm";
import { CURRENCY, REVIEW_THRESHOLD_PERCENT } from "../billing/plans";
import type { Database } from "../db/client";
import { type Placeholders, preparedOnce } from "../db/prepared";
import type { StoredEntry } from "../ledger/ledger-store";
import { newId } from "../lib/ids";
import { PLANS } from "../schemas/billing";
import { REVIEW_SLA_DEFAULT_SECONDS, ReviewOpening } from "../schemas/reviews";
import { ShadowModelVerdict, ShadowVerdict } from "../schemas/shadow";
import { AssessmentRecord } from "./outcome";
import { isRecordedInputs, type RecordedInputs } from "./rules/inputs";

/**
 * Everything one assessment writes, decided before anything is written. The ledger object
 * makes it in the critical section that sequences the assessment's entry and keeps it beside
 * the entry (its write), so a retry or a racing duplicate writes exactly this and answers
 * exactly this: same ids, same signature. Its group commit sends the plan the section made
 * (or, after a restart, the kept JSON read back), and a duplicate is answered from the kept JSON.
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
  /**
   * The shadow risk model's would-be answer (`assessments.shadow_model`): like `shadow`, beside
   * the record, never signed; absent when the mode shadows no model.
   */
  shadowModel: ShadowModelVerdict.optional(),
  /**
   * The payment's raw network identifiers (`assessments.network_ids`, src/network/assess.ts):
   * internal, never signed nor shown; absent for other kinds.
   */
  networkIds: z
    .object({
      agent_key: z.string().nullable(),
      issuer_key: z.string().nullable(),
      instrument: z.string().nullable(),
    })
    .optional(),
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
    shadow_model: plan.shadowModel ?? null,
    network_ids: plan.networkIds ?? null,
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
    reviewRecheck: review?.recheck ? JSON.stringify(review.recheck) : null,
  };
  return persist(db, values);
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
  reviewRecheck: string | null;
};

/** The plans' prices as `persist_assessment` reads them: `{plan: {included, unit_amount}}`. */
const PRICES = JSON.stringify(
  Object.fromEntries(
    Object.entries(PLANS).map(([id, p]) => [
      id,
      { included: p.included, unit_amount: p.unit_amount },
    ]),
  ),
);

/**
 * The database function `persist_assessment` (drizzle/0012_persist_assessment.sql; its
 * 15-argument form, with the review item's re-check terms, drizzle/0014), whose plan
 * each database session keeps: the statement it holds was parsed and planned anew for every
 * assessment when it was sent as text. Prices, currency, review threshold and default SLA are
 * this code's, passed with each call. Rendered once per isolate.
 */
const persist = preparedOnce((db, v: Placeholders<PersistValues>) =>
  db.execute<{ inserted: string | null; stored: string | null }>(sql`
    select inserted, stored from persist_assessment(${v.orgId}::uuid, ${v.livemode}::boolean,
      ${v.created}::timestamptz, ${v.contentHash}, ${v.row}::json, ${v.mandateRow}::json,
      ${v.eventRows}::json, ${v.spendReviewEventId}::uuid, ${v.reviewId}::uuid,
      ${v.reviewSpend}::jsonb, ${v.reviewRecheck}::jsonb, ${PRICES}::jsonb, ${CURRENCY}::text,
      ${REVIEW_THRESHOLD_PERCENT}::int, ${REVIEW_SLA_DEFAULT_SECONDS}::int)`),
);

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
