import { and, asc, desc, eq, gt, gte, lt, lte, type SQL } from "drizzle-orm";
import { type SummaryRow, summaryColumns, summaryJoins } from "../assess/assessment-summary";
import type { Tenant } from "../auth/tenant";
import type { Database } from "../db/client";
import { decodeIdCursor, type Page, page } from "../db/pagination";
import {
  agentKeys,
  agents,
  assessments,
  credentialIssuers,
  principals,
  reviews,
} from "../db/schema";
import { ApiError, orNotFound } from "../errors";
import type { REVIEW_STATUSES, ResolveReviewBody } from "../schemas/reviews";
import { type Closed, closeReview } from "./close";
import { recheckApproval, standingColumns, standingJoins } from "./recheck";
import type { ReviewRow } from "./records";

/** A review item and its assessment's summary columns (src/assess/assessment-summary.ts). */
export interface ReviewWithSummary {
  review: ReviewRow;
  summary: SummaryRow;
}

/** Review items with their assessments' summaries: one statement, however many items. */
function selectReviewItems(db: Database) {
  return db
    .select({ review: reviews, summary: summaryColumns })
    .from(reviews)
    .innerJoin(assessments, summaryJoins.review)
    .leftJoin(agents, summaryJoins.agent)
    .leftJoin(principals, summaryJoins.principal)
    .$dynamic();
}

/** One review item of the caller's org and mode with its assessment's summary, or 404. */
export async function getReview(tenant: Tenant, id: string): Promise<ReviewWithSummary> {
  const [rows] = await tenant.batch((db) => [
    selectReviewItems(db).where(and(eq(reviews.id, id), eq(reviews.livemode, tenant.livemode))),
  ]);
  return orNotFound(rows[0] as ReviewWithSummary | undefined);
}

/**
 * Resolves an open review as the caller (a session's person, or a key), once: a second
 * resolve, or the loser of concurrent ones, gets 409 `review_already_resolved`; an item past
 * its SLA gets 409 `review_expired` (the sweep denies it); an approval of a verified credential
 * that its re-check refuses gets 409 `review_recheck_failed`, and one whose spend the ledger
 * object refuses 409 `review_spend_refused`: nothing is approved, the item stays open.
 */
export async function resolveReview(
  tenant: Tenant,
  id: string,
  body: ResolveReviewBody,
): Promise<ReviewRow> {
  // The item, its assessment's payload and what a re-check reads now, in one statement.
  const [rows] = await tenant.batch((db) => [
    db
      .select({ review: reviews, jws: assessments.jws, ...standingColumns })
      .from(reviews)
      .innerJoin(assessments, eq(assessments.id, reviews.assessmentId))
      .leftJoin(credentialIssuers, standingJoins.issuer)
      .leftJoin(agentKeys, standingJoins.holderKey)
      .leftJoin(agents, standingJoins.agent)
      .where(and(eq(reviews.id, id), eq(reviews.livemode, tenant.livemode))),
  ]);
  const found = orNotFound(rows[0]);
  const _who = await tenant.caller();
  if (found.review.status !== "open") throw closedError(found.review);
  // Availability is never approval: past its SLA an item is only the sweep's to close (deny).
  // The ledger object checks the deadline again where it sequences the close (`notAfter`).
  if (found.review.expiresAt.getTime() <= Date.now()) throw expiredError(found.review);
  // A denial needs no re-check: it relies on nothing that can have changed.
  const rechecked =
    body.decision === "approve"
      ? await recheckApproval(tenant, found.review, found.jws, found)
      : undefined;
  const closed: Closed = await closeReview(
    tenant,
    { review: found.review, assessmentJws: found.jws, notAfter: found.review.expiresAt },
    {
      decision: body.decision,
      reason: "review.resolved",
      note: body.note ?? null,
      ...(rechecked === undefined ? {} : { rechecked_at: rechecked }),
    },
  );
  if (closed.kind === "late") throw expiredError(found.review);
  if (closed.kind === "refused") {
    throw new ApiError("review_spend_refused", {
      reason: closed.refusal,
      message:
        closed.refusal === "already_consumed"
          ? "the credential's transaction was already approved under this consent"
          : "approving would take the open mandate past its budget, a period cap or its number of payments",
    });
  }
  if (!closed.won) throw closedError(closed.row);
  return closed.row;
}

function expiredError(row: ReviewRow): ApiError {
  return new ApiError("review_expired", {
    message: "the review passed its SLA and is denied by the sweep",
    expires_at: row.expiresAt.toISOString(),
  });
}

function closedError(row: ReviewRow): ApiError {
  const details = { status: row.status, decision: row.decision, resolved_at: row.resolvedAt };
  return row.status === "expired"
    ? new ApiError("review_expired", details)
    : new ApiError("review_already_resolved", details);
}

interface ReviewFilters {
  status?: (typeof REVIEW_STATUSES)[number] | undefined;
  agent?: string | undefined;
  from?: string | undefined;
  to?: string | undefined;
  order: "asc" | "desc";
  limit: number;
  cursor?: string | undefined;
}

/**
 * A page of the caller's review items in its own mode, oldest first by default (a queue is
 * worked from the longest waiting), keyset by the UUIDv7 id in either direction.
 */
export async function listReviews(
  tenant: Tenant,
  q: ReviewFilters,
): Promise<Page<ReviewWithSummary>> {
  const after = decodeIdCursor(q.cursor);
  const ascending = q.order === "asc";
  const filters: (SQL | undefined)[] = [
    eq(reviews.livemode, tenant.livemode),
    after ? (ascending ? gt(reviews.id, after) : lt(reviews.id, after)) : undefined,
    q.status ? eq(reviews.status, q.status) : undefined,
    q.agent ? eq(reviews.agentId, q.agent.toLowerCase()) : undefined,
    q.from ? gte(reviews.createdAt, new Date(q.from)) : undefined,
    q.to ? lte(reviews.createdAt, new Date(q.to)) : undefined,
  ];
  const [rows] = await tenant.batch((db) => [
    selectReviewItems(db)
      .where(and(...filters))
      .orderBy(ascending ? asc(reviews.id) : desc(reviews.id))
      .limit(q.limit + 1),
  ]);
  return page(rows as ReviewWithSummary[], q.limit, (row) => row.review.id);
}
