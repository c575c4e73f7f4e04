import { z } from "@hono/zod-openapi";
import { eq, type SQL, sql } from "drizzle-orm";
import {
  CURRENCY,
  PERIOD_START_SQL,
  REVIEW_THRESHOLD_PERCENT,
  usageChargeSql,
} from "../billing/plans";
import type { Database } from "../db/client";
import { sqlState } from "../db/client";
import { assessments, auditEntries } from "../db/schema";
import type { Batch, Tenant } from "../db/tenant";
import { ApiError } from "../errors";
import { auditEntryRow } from "../ledger/ledger-postgres";
import type { StoredEntry } from "../ledger/ledger-store";
import { newId } from "../lib/ids";
import { isRecordedInputs, type RecordedInputs } from "../rules/inputs";
import { AssessmentRecord } from "./outcome";

/**
 * Everything one assessment writes, decided before anything is written. It travels with the
 * ledger append (as its attachment), so a retry or a racing duplicate writes exactly this and
 * answers exactly this: same ids, same signature. The first caller's plan, read back from the
 * ledger object, is parsed with this schema before anything is written from it.
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
});
export type PersistPlan = z.infer<typeof PersistPlan>;

export function recordOf(plan: PersistPlan, entry: StoredEntry): AssessmentRecord {
  return { ...plan.record, audit_entry_id: entry.id, audit_sequence: entry.sequence };
}

/**
 * One transaction, one round trip: the ledger entry, the mandate, the outbox events (and the
 * webhook deliveries they fan out to), the assessment, the agent's evidence counters and the
 * billing meter (only when this transaction inserted the assessment, so a replayed plan never
 * counts or bills twice), and the spend guard's review event. Every insert is idempotent.
 * Answers the id stored for this content, which differs from the plan's only when a concurrent
 * request with the same idempotency key and other content won.
 */
export async function persist(
  tenant: Tenant,
  orgId: string,
  plan: PersistPlan,
  entry: StoredEntry,
): Promise<string | null> {
  const record = recordOf(plan, entry);
  const { mandate } = plan;
  const row = {
    ...record,
    org_id: orgId,
    created_at: record.created,
    agent_id: record.agent?.id ?? null,
    inputs: plan.inputs ?? null,
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
  const [, , stored] = await meteredBatch(tenant, (db) => [
    db.insert(auditEntries).values(auditEntryRow(entry)).onConflictDoNothing(),
    // Everything else only with the assessment itself: a plan that loses to another request
    // (a reused idempotency key) leaves no mandate, no event and no count behind.
    db.execute(sql`
      with ins as (
        insert into assessments
        select * from json_populate_record(null::assessments, ${JSON.stringify(row)}::json)
        on conflict do nothing
        returning agent_id, decision, livemode
      ),
      m as (
        insert into mandates
        select * from json_populate_record(null::mandates, ${JSON.stringify(mandateRow)}::json)
        where exists (select 1 from ins)
        on conflict do nothing
      ),
      ev as (
        insert into events
        select * from json_populate_recordset(null::events, ${JSON.stringify(eventRows)}::json)
        where exists (select 1 from ins)
        on conflict do nothing
      ),
      -- The meter: one billable (live) assessment, counted only by the transaction that
      -- inserted it, so a replayed plan or a racing duplicate is never billed twice.
      -- The cap holds under concurrency: the check runs under the meter row's lock, and one
      -- assessment past it fails this whole transaction (nothing stored, answered 402).
      meter as (
        insert into billing_usage (period_start, assessments)
        select ${PERIOD_START_SQL}, 1 + billing_refuse_if(${overCap(sql`1`)})
        from ins where ins.livemode
        on conflict (org_id, period_start) do update
          set assessments = billing_usage.assessments + 1
                + billing_refuse_if(${overCap(sql`billing_usage.assessments + 1`)}),
            updated_at = now()
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
        select ${newId()}::uuid, 'spend.review_required',
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
      )
      -- Test-mode assessments are no evidence about an agent's live trust.
      update agents a set
        approvals = a.approvals + (ins.decision = 'approve')::int,
        reviews = a.reviews + (ins.decision = 'review')::int,
        denials = a.denials + (ins.decision = 'deny')::int,
        trust_reason = 'assessment'
      from ins where a.id = ins.agent_id and ins.livemode`),
    db
      .select({ id: assessments.id })
      .from(assessments)
      .where(eq(assessments.contentHash, record.content_hash)),
  ]);
  return stored[0]?.id ?? null;
}

/** Whether `assessments` billable assessments this period would take the charge past the cap. */
function overCap(assessments: SQL): SQL {
  return sql`coalesce((select ${usageChargeSql(sql`b.plan`, assessments)} > b.spending_cap
    from billing_accounts b where b.spending_cap is not null), false)`;
}

/** The persist batch, its refusal by the meter (SQLSTATE AR402) answered as the guard's 402. */
async function meteredBatch<T extends Batch>(tenant: Tenant, build: (db: Database) => T) {
  try {
    // The events' webhook deliveries are read in the same round trip and enqueued after the
    // response, so a receiver never sits on the verdict's path.
    return await tenant.batch(build, { webhooks: true });
  } catch (error) {
    if (sqlState(error) === CAP_REFUSED) {
      throw new ApiError("spending_cap_reached", {
        message: "the spending cap was reached while this request was in flight",
      });
    }
    throw error;
  }
}

/** Raised by billing_refuse_if() (drizzle/0000_baseline.sql, section "Billing"). */
const CAP_REFUSED = "AR402";
