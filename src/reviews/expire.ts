import { and, asc, eq, lte, sql } from "drizzle-orm";
import { orgActor, orgBatchOf } from "../auth/tenant";
import { database } from "../db/client";
import { assessments, reviews } from "../db/schema";
import type { Env } from "../env";
import { logError } from "../lib/log";
import { closeReview } from "./close";
import { SLA_SWEEP } from "./resolution";

/** Orgs swept per Cron run, and items per org: the rest wait for the next minute. */
const ORGS_PER_SWEEP = 100;
const ITEMS_PER_ORG = 100;

/**
 * The Cron sweep of the review SLA: every open item past its due time is closed as `deny`
 * with reason `review.expired`, like a resolution (the ledger's `review.resolved`, a signed
 * resolved payload, the `assessment.resolved` webhook), by the SLA sweep as resolver. An item a
 * person resolved meanwhile keeps that resolution: both go through the item's one ledger key.
 */
export async function expireOverdueReviews(env: Env): Promise<{ expired: number; failed: number }> {
  const { rows } = await database(env).execute<{ org_id: string }>(
    sql`select org_id from reviews_orgs_overdue(${ORGS_PER_SWEEP})`,
  );
  const results = await Promise.allSettled(rows.map(({ org_id }) => expireOrg(env, org_id)));
  const failed = results.filter((r) => r.status === "rejected").length;
  if (failed > 0) logError("review expiry sweep failures", { failed });
  const expired = results.reduce((n, r) => n + (r.status === "fulfilled" ? r.value : 0), 0);
  return { expired, failed };
}

async function expireOrg(env: Env, orgId: string): Promise<number> {
  const [due] = await orgBatchOf(env, orgId, (db) => [
    db
      .select({ review: reviews, jws: assessments.jws })
      .from(reviews)
      .innerJoin(assessments, eq(assessments.id, reviews.assessmentId))
      .where(and(eq(reviews.status, "open"), lte(reviews.expiresAt, sql`now()`)))
      .orderBy(asc(reviews.expiresAt))
      .limit(ITEMS_PER_ORG),
  ]);
  // Outside a request nothing defers the webhooks: the sweep sends them before it returns (a
  // failed enqueue is not lost: the deliveries' lease lets the Cron sweep send them).
  const sending: Promise<unknown>[] = [];
  const sweep = orgActor(env, orgId, SLA_SWEEP, (work) => sending.push(work));
  let expired = 0;
  try {
    for (const { review, jws } of due) {
      const closed = await closeReview(
        sweep,
        { review, assessmentJws: jws },
        { decision: "deny", reason: "review.expired", note: null },
      );
      if (closed.kind === "closed" && closed.won) expired++;
    }
  } finally {
    // Sent even when a later close failed: what the earlier closes made is not held back.
    await Promise.allSettled(sending);
  }
  return expired;
}
