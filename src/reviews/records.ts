import { payloadOf } from "../assess/refinement";
import type { reviews } from "../db/schema";
import { isoOrNull } from "../schemas/common";
import type { Review, ReviewStatus } from "../schemas/reviews";

export type ReviewRow = typeof reviews.$inferSelect;

type Resolver = { type: string; id: string };

/** A review item as the API shows it. `verifyUrl` is the key set the payloads verify against. */
export function reviewOf(row: ReviewRow, verifyUrl: string): Review {
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
  };
}
