import { reviews } from "../db/schema";
import { isoOrNull } from "../schemas/common";
import type { Refinement, ReviewStatus } from "../schemas/reviews";

/**
 * An assessment's refinement by its review item, as the Outcome shows it: what the assess
 * path reads of the item and answers (the review queue itself is src/reviews/).
 */

/** The columns of a review item an Outcome's `refinement` is made of. */
export const refinementColumns = {
  id: reviews.id,
  status: reviews.status,
  decision: reviews.decision,
  reason: reviews.reason,
  resolvedAt: reviews.resolvedAt,
  resolvedBy: reviews.resolvedBy,
  jws: reviews.jws,
  kid: reviews.kid,
};
export type RefinementRow = Pick<typeof reviews.$inferSelect, keyof typeof refinementColumns>;

type Resolver = { type: string; id: string };

/** The resolved Risk Payload's reference, once there is one. */
export function payloadOf(row: Pick<RefinementRow, "jws" | "kid">, verifyUrl: string) {
  return row.jws && row.kid
    ? { jws: row.jws, kid: row.kid, alg: "EdDSA" as const, verify_url: verifyUrl }
    : null;
}

/** The Outcome's `refinement` from the assessment's review item (null: no review). */
export function refinementOf(
  row: RefinementRow | null | undefined,
  verifyUrl: string,
): Refinement | null {
  if (!row) return null;
  return {
    status: row.status as ReviewStatus,
    review_id: row.id,
    decision: row.decision ?? null,
    reason: (row.reason as Refinement["reason"]) ?? null,
    resolved_at: isoOrNull(row.resolvedAt),
    resolved_by: (row.resolvedBy as Resolver | null) ?? null,
    risk_payload: payloadOf(row, verifyUrl),
  };
}

/** The refinement of a review item this very request opened: open, nothing decided yet. */
export function openedRefinement(reviewId: string): Refinement {
  return {
    status: "open",
    review_id: reviewId,
    decision: null,
    reason: null,
    resolved_at: null,
    resolved_by: null,
    risk_payload: null,
  };
}
