import { z } from "@hono/zod-openapi";
import { sql } from "drizzle-orm";
import {
  heldInputs,
  isRecordedInputs,
  type RecordedInputs,
  STORED_CREDENTIAL_COLUMNS,
} from "../assess/rules/inputs";
import { DateTime } from "../schemas/common";
import type { EvalCase } from "./eval-cases";

/**
 * Evaluation cases from labeled history (docs/feedback.md, Evaluation sets): each assessment
 * of the range whose effective label is one of the filter's becomes a case whose request is
 * the mandate as stored, whose context is what the model read then (`assessments.inputs`), and
 * whose expected decision derives from the label.
 */

/** The labels that say what the decision should have been; `dispute` and `refund` do not. */
export const HISTORY_LABELS = ["fraud", "chargeback", "legitimate"] as const;
type HistoryLabel = (typeof HISTORY_LABELS)[number];

export const FromHistory = z
  .strictObject({
    from: DateTime.optional().openapi({ description: "Assessments created at or after" }),
    to: DateTime.optional().openapi({ description: "Assessments created at or before" }),
    labels: z
      .array(z.enum(HISTORY_LABELS))
      .min(1)
      .default([...HISTORY_LABELS])
      .openapi({ description: "Effective labels to take (default all three)" }),
    limit: z.int().min(1).max(1_000).default(1_000).openapi({
      description: "Most recent labeled assessments of the range to take",
    }),
  })
  .refine((q) => !q.from || !q.to || Date.parse(q.from) <= Date.parse(q.to), {
    path: ["from"],
    message: "must not be after to",
  })
  .openapi("EvalSetFromHistory");
export type FromHistory = z.infer<typeof FromHistory>;

/** fraud and chargeback should have been denied; legitimate approved. */
export function expectedOf(label: HistoryLabel): "deny" | "approve" {
  return label === "legitimate" ? "approve" : "deny";
}

/**
 * The labeled assessments of the range in the given mode, newest first: the effective label
 * (the latest that is not `dispute`) computed per row, only assessments whose inputs were
 * recorded and whose mandate is still whole (an erased principal's mandate is not replayable).
 */
export function labeledHistory(q: FromHistory, livemode: boolean) {
  return sql`select a.id, to_json(a.created_at)#>>'{}' as created, a.kind, a.mandate_type,
      a.inputs, ${STORED_CREDENTIAL_COLUMNS}, m.mandate, l.label
    from assessments a
    join mandates m on m.assessment_id = a.id and m.erased_at is null
    cross join lateral (
      select f.label from assessment_feedback f
      where f.assessment_id = a.id and f.livemode = a.livemode and f.label <> 'dispute'
      order by f.occurred_at desc, f.created_at desc, f.id desc limit 1
    ) l
    where a.livemode = ${livemode} and a.inputs is not null
      and l.label in (${sql.join(
        q.labels.map((label) => sql`${label}`),
        sql`, `,
      )})
      ${q.from === undefined ? sql`` : sql`and a.created_at >= ${q.from}::timestamptz`}
      ${q.to === undefined ? sql`` : sql`and a.created_at <= ${q.to}::timestamptz`}
    order by a.id desc
    limit ${q.limit}`;
}

export interface LabeledRow {
  id: string;
  created: string;
  kind: string;
  mandate_type: string | null;
  inputs: unknown;
  /** The stored outcome's credential failure and its reason's words (`StoredCredential`). */
  credential_failure: string | null;
  credential_reason: string | null;
  mandate: unknown;
  label: HistoryLabel;
}

/** One case per labeled assessment, oldest first, its context as the model read it then. */
export function casesOf(rows: LabeledRow[]): EvalCase[] {
  return [...rows].reverse().flatMap((row): EvalCase[] => {
    if (!isRecordedInputs(row.inputs)) return [];
    // The facts of history hold in the case as in a backtest: a refused credential stays so.
    const inputs: RecordedInputs = heldInputs(row.inputs, {
      failure: row.credential_failure,
      reason: row.credential_reason,
    });
    const { identity, history } = inputs;
    const agent = identity.agent
      ? {
          id: identity.agent.id,
          trust_score: identity.agent.trust_score,
          risk_tier: identity.agent.risk_tier,
          status: identity.agent.status,
          card_status: identity.agent.card_status,
          // A claim stays a claim: only a proven agent reads as identified by its key.
          identified_by:
            identity.proven === true
              ? ("key" as const)
              : identity.method === "card"
                ? ("card" as const)
                : ("explicit" as const),
        }
      : null;
    return [
      {
        id: `a_${row.id}`,
        request: {
          kind: row.kind,
          ...(row.kind === "ap2_payment" && row.mandate_type
            ? { mandateType: row.mandate_type }
            : {}),
          mandate: row.mandate,
        },
        context: {
          agent,
          key: identity.proven === true ? "active" : identity.key,
          card: identity.card,
          conflict: identity.conflict,
          credential: inputs.credential ?? null,
          history: {
            burst: history.burst,
            approved_count: history.approvedCount,
            median_approved_amount: history.medianApprovedAmount,
            payee_seen: history.payeeSeen,
            recipient_seen: history.recipientSeen,
          },
          aggregates: {},
          geo: inputs.geo,
          at: new Date(row.created).toISOString(),
        },
        expected: expectedOf(row.label),
        fraud: row.label !== "legitimate",
      } as EvalCase,
    ];
  });
}
