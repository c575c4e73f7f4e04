import { and, eq } from "drizzle-orm";
import type { SpendRefusal } from "../ap2-credentials/spend";
import type { Batch } from "../auth/tenant";
import type { Database } from "../db/client";
import { events, reviews } from "../db/schema";
import { type Committer, commit, ORPHANED } from "../ledger/commit";
import type { StoredEntry } from "../ledger/ledger-store";
import { newId } from "../lib/ids";
import { ReviewSpend } from "../schemas/reviews";
import type { AssessmentResolvedEventData } from "../schemas/webhook-events";
import { placeInJws, setPlaceStatus } from "../status-lists/revocation";
import type { ReviewRow } from "./records";
import { type Resolution, signResolution } from "./resolution";

/** How a close attempt ended. */
export type Closed =
  /** The item is closed; `won` when this call's terms closed it, not an earlier resolver's. */
  | { kind: "closed"; row: ReviewRow; won: boolean }
  /** The ledger object refused the approval's spend: nothing was sequenced or written. */
  | { kind: "refused"; refusal: SpendRefusal }
  /** The close reached the ledger object after the item's deadline: nothing was sequenced. */
  | { kind: "late" };

/** The once key every closer of one item shares: a person, a key and the SLA sweep alike. */
function onceKey(reviewId: string): string {
  return `review:${reviewId}`;
}

/**
 * Closes a review once, whoever asks and however many ask at once: the org's ledger object
 * sequences `review.resolved` under the item's one key (and judges an approval's spend in that
 * same step), and the winner's terms (the decision, who, when, the signed resolved payload) are
 * written with the entry, the item's row and the `assessment.resolved` outbox event in one
 * transaction. A loser (or a retry) finishes the winner's write and learns it lost.
 */
export async function closeReview(
  committer: Committer,
  /**
   * `notAfter`: a person's or a key's close must be sequenced before the item's SLA ends (the
   * ledger object refuses it after); the sweep's, which denies, has no deadline.
   */
  target: { review: ReviewRow; assessmentJws: string; notAfter?: Date },
  choice: Pick<Resolution, "decision" | "reason" | "note" | "rechecked_at">,
): Promise<Closed> {
  const { review } = target;
  const { orgId, actor } = await committer.caller();
  const base = {
    review_id: review.id,
    assessment_id: review.assessmentId,
    ...choice,
    resolved_at: new Date().toISOString(),
    resolved_by: { type: actor.type, id: actor.id },
  };
  const terms: Resolution = {
    ...base,
    ...(await signResolution(committer.env, target.assessmentJws, base)),
  };
  const spend =
    choice.decision === "approve" && review.spend !== null
      ? { terms: ReviewSpend.parse(review.spend), livemode: review.livemode }
      : undefined;
  const committed = await commit(
    committer,
    {
      type: "review.resolved",
      subject: { type: "review", id: review.id },
      payload: terms,
      once: [onceKey(review.id)],
      ...(spend ? { spend } : {}),
      ...(target.notAfter ? { notAfter: target.notAfter.getTime() } : {}),
    },
    (db, { entry, terms: first }) =>
      [
        // The verdict the resolution supersedes is void: INVALID in its status list.
        ...voidedVerdict(db, orgId, review, target.assessmentJws),
        ...closingStatements(db, orgId, review, first, entry),
      ] as unknown as Batch,
    {
      webhooks: true,
      // The first closer's terms are gone (a day later): its write landed unless it died.
      expired: async (): Promise<Closed | typeof ORPHANED> => {
        const [rows] = await committer.batch((db) => [readReview(db, review.id)]);
        const row = rows[0];
        return row && row.status !== "open" ? { kind: "closed", row, won: false } : ORPHANED;
      },
      refused: async (refusal): Promise<Closed> => ({ kind: "refused", refusal }),
      late: async (): Promise<Closed> => ({ kind: "late" }),
    },
  );
  if (!("entry" in committed)) return committed;
  const row = (committed.results.at(-1) as ReviewRow[])[0];
  if (!row) throw new Error(`review ${review.id} vanished while closing`);
  return { kind: "closed", row, won: !committed.replayed };
}

function voidedVerdict(db: Database, orgId: string, review: ReviewRow, jws: string) {
  const place = placeInJws(jws, orgId);
  return place === null
    ? []
    : [setPlaceStatus(db, place, { type: "assessment", id: review.assessmentId })];
}

function readReview(db: Database, id: string) {
  return db.select().from(reviews).where(eq(reviews.id, id));
}

/**
 * After the entry: the item's closing (only from `open`: the terms are the ledger's one winner's, so
 * a second write changes nothing), the outbox event (one per item, by its dedupe key) and the
 * item as it now stands, last.
 */
function closingStatements(
  db: Database,
  orgId: string,
  review: ReviewRow,
  terms: Resolution,
  entry: StoredEntry,
): Batch {
  const status = terms.reason === "review.expired" ? "expired" : "resolved";
  return [
    db
      .update(reviews)
      .set({
        status,
        decision: terms.decision,
        reason: terms.reason,
        note: terms.note,
        resolvedAt: new Date(terms.resolved_at),
        resolvedBy: terms.resolved_by,
        jws: terms.jws,
        kid: terms.kid,
        auditEntryId: entry.id,
      })
      .where(and(eq(reviews.id, review.id), eq(reviews.status, "open"))),
    db
      .insert(events)
      .values({
        id: newId(),
        orgId,
        type: "assessment.resolved",
        data: {
          assessment_id: terms.assessment_id,
          review_id: terms.review_id,
          status,
          decision: terms.decision,
          original_decision: "review",
          reason: terms.reason,
          resolved_by: terms.resolved_by,
          resolved_at: terms.resolved_at,
          agent_id: review.agentId,
          risk_payload: { jws: terms.jws, kid: terms.kid },
        } satisfies AssessmentResolvedEventData,
        livemode: review.livemode,
        dedupeKey: `assessment.resolved:${review.id}`,
      })
      .onConflictDoNothing(),
    readReview(db, review.id),
  ];
}
