/**
 * The evidence a reviewer reads beside a review (docs/reviews.md, "Evidence"): the agent's
 * recent payments, how often it paid this payee, and the labels the org knows of the payee.
 * Read from the payment history (`payments`, `payment_labels`), which holds every assessment
 * and every imported record, so imported history counts as the assess path counts it. Beside
 * them, the AP2 Payment Receipts recorded against the assessment (docs/credentials.md, "Payment
 * receipts"): how the payment ended, as its processor said.
 */
import { sql } from "drizzle-orm";
import type { Tenant } from "../auth/tenant";
import { orNotFound } from "../errors";
import { evidenceReceipts, toReceipt } from "../payment-receipts/receipts";
import { type AssessmentEvidence, EVIDENCE_HISTORY_LIMIT } from "../schemas/evidence";
import { FEEDBACK_LABELS, type FeedbackLabel } from "../schemas/vocabulary";

interface FactsRow {
  agent_id: string | null;
  has_payee: boolean;
  payee_payments: number | null;
  labels: Partial<Record<FeedbackLabel, number>> | null;
  latest_label: FeedbackLabel | null;
  latest_at: string | Date | null;
}

interface HistoryRow {
  id: string;
  occurred_at: string | Date;
  amount: string | number | null;
  currency: string | null;
  decision: AssessmentEvidence["agent_history"][number]["decision"];
  current: boolean;
}

/**
 * The evidence of one assessment of the caller's org and mode, or 404. One round trip of two
 * statements, each finding the assessment's payment by its id: the facts (the payment, the
 * agent's earlier payments to its payee, the payee's labels known now) and the agent's latest
 * payments up to this one.
 */
export async function assessmentEvidence(
  tenant: Tenant,
  assessmentId: string,
): Promise<AssessmentEvidence> {
  const mode = tenant.livemode;
  const payment = sql`select p.id, p.agent_id, p.counterparty, p.occurred_at from payments p
    where p.assessment_id = ${assessmentId}::uuid and p.livemode = ${mode}`;
  const [facts, history, receipts] = await tenant.batch((db) => [
    db.execute(sql`with p as (${payment}),
      known as (
        select l.id, l.payment_id, l.label, l.known_at
        from p join payments q on q.counterparty = p.counterparty
        join payment_labels l on l.org_id = q.org_id and l.payment_id = q.id
        where q.livemode = ${mode} and l.livemode = ${mode} and l.known_at <= now()
      )
      select p.agent_id, p.counterparty is not null as has_payee,
        case when p.agent_id is null or p.counterparty is null then null else (
          select count(*)::int from payments q
          where q.livemode = ${mode} and q.agent_id = p.agent_id
            and q.counterparty = p.counterparty
            and (q.occurred_at, q.id) < (p.occurred_at, p.id)
        ) end as payee_payments,
        (select json_object_agg(c.label, c.n) from (
          select k.label, count(distinct k.payment_id)::int as n from known k group by k.label
        ) c) as labels,
        (select k.label from known k order by k.known_at desc, k.id desc limit 1) as latest_label,
        (select max(k.known_at) from known k) as latest_at
      from p`),
    db.execute(sql`with p as (${payment})
      select h.id, h.occurred_at, h.amount, h.currency, h.decision, h.id = p.id as current
      from p join lateral (
        select q.id, q.occurred_at, q.amount, q.currency, q.decision from payments q
        where q.livemode = ${mode} and q.agent_id = p.agent_id
          and (q.occurred_at, q.id) <= (p.occurred_at, p.id)
        order by q.occurred_at desc, q.id desc
        limit ${EVIDENCE_HISTORY_LIMIT}
      ) h on true
      order by h.occurred_at, h.id`),
    // What the payment's processor said of it: AP2 Payment Receipts kept as evidence.
    evidenceReceipts(db, assessmentId, mode),
  ]);
  const row = orNotFound((facts as unknown as { rows: FactsRow[] }).rows[0]);
  const points = (history as unknown as { rows: HistoryRow[] }).rows;
  return {
    object: "assessment_evidence",
    assessment_id: assessmentId,
    livemode: mode,
    agent_id: row.agent_id,
    agent_history: points.map((point) => ({
      id: point.id,
      created: iso(point.occurred_at),
      amount: point.amount === null ? null : Number(point.amount),
      currency: point.currency,
      decision: point.decision,
      current: point.current,
    })),
    agent_payee_payments: row.payee_payments,
    payee_labels: row.has_payee
      ? {
          ...(Object.fromEntries(
            FEEDBACK_LABELS.map((label) => [label, Number(row.labels?.[label] ?? 0)]),
          ) as Record<FeedbackLabel, number>),
          latest_label: row.latest_label,
          latest_at: row.latest_at === null ? null : iso(row.latest_at),
        }
      : null,
    payment_receipts: receipts.map(toReceipt),
  };
}

/** A timestamp as the driver gives it (a Date, or Postgres text) in ISO 8601. */
function iso(value: string | Date): string {
  return new Date(value).toISOString();
}
