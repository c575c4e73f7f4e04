import { summariesById } from "../assess/assessment-reads";
import { presentSummaries, type SummaryRow } from "../assess/assessment-summary";
import { payloadOf } from "../assess/refinement";
import type { Tenant } from "../auth/tenant";
import type { reviews } from "../db/schema";
import type { AssessmentSummary } from "../schemas/assessments";
import { isoOrNull } from "../schemas/common";
import type { Review, ReviewStatus } from "../schemas/reviews";

export type ReviewRow = typeof reviews.$inferSelect;

type Resolver = { type: string; id: string };

/**
 * A review item as the API shows it, with its assessment's summary. `verifyUrl` is the key set
 * the payloads verify against.
 */
export function reviewOf(row: ReviewRow, verifyUrl: string, assessment: AssessmentSummary): Review {
  return {
    object: "review",
    id: row.id,
    created: row.createdAt.toISOString(),
    livemode: row.livemode,
    assessment_id: row.assessmentId,
    agent_id: row.agentId,
    status: row.status as ReviewStatus,
    expires_at: row.expiresAt.toISOString(),
    original_decision: "review",
    decision: row.decision ?? null,
    reason: (row.reason as Review["reason"]) ?? null,
    note: row.note,
    resolved_at: isoOrNull(row.resolvedAt),
    resolved_by: (row.resolvedBy as Resolver | null) ?? null,
    credential_backed: row.spend !== null,
    risk_payload: payloadOf(row, verifyUrl),
    audit_entry_id: row.auditEntryId,
    assessment,
  };
}

/** Review items with their assessments' summaries, as a page or one item answers them. */
export async function presentReviews(
  tenant: Tenant,
  rows: { review: ReviewRow; summary: SummaryRow }[],
  verifyUrl: string,
): Promise<Review[]> {
  const summaries = await presentSummaries(
    tenant.env,
    rows.map((row) => row.summary),
  );
  return rows.map((row, i) => reviewOf(row.review, verifyUrl, summaries[i] as AssessmentSummary));
}

/**
 * A review item just closed, with its assessment's summary read after the close (so that
 * `decided_by` names who resolved it): one more statement, on the resolve path only.
 */
export async function presentClosedReview(
  tenant: Tenant,
  row: ReviewRow,
  verifyUrl: string,
): Promise<Review> {
  const summary = (await summariesById(tenant, [row.assessmentId])).get(row.assessmentId);
  if (!summary) throw new Error(`review ${row.id} has no assessment ${row.assessmentId}`);
  return reviewOf(row, verifyUrl, summary);
}
