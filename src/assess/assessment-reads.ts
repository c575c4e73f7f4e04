import { and, eq, gte, lte, max } from "drizzle-orm";
import type { Tenant } from "../auth/tenant";
import { listById } from "../db/pagination";
import { assessments, auditCheckpoints, reviews } from "../db/schema";
import { orNotFound } from "../errors";
import type { ActionKind } from "../schemas/vocabulary";
import type { Outcome } from "./outcome";
import { recordJson, toOutcome } from "./outcome";
import { refinementOf } from "./refinement";

/** The decision filter takes the spec's spellings: `approved` and `denied` too. */
export const STATUS_FILTER = {
  approve: "approve",
  approved: "approve",
  review: "review",
  deny: "deny",
  denied: "deny",
} as const;

/** A page of the caller's mode's assessments, newest first, by the filters asked. */
export async function listAssessmentRows(
  tenant: Tenant,
  q: {
    limit: number;
    cursor?: string | undefined;
    status?: keyof typeof STATUS_FILTER | undefined;
    agent?: string | undefined;
    kind?: ActionKind | undefined;
    from?: string | undefined;
    to?: string | undefined;
  },
) {
  // Test and live data are apart, as at Stripe: listById keeps a key to its own mode.
  return listById(
    tenant,
    assessments,
    { limit: q.limit, cursor: q.cursor },
    q.status ? eq(assessments.decision, STATUS_FILTER[q.status]) : undefined,
    q.agent ? eq(assessments.agentId, q.agent.toLowerCase()) : undefined,
    q.kind ? eq(assessments.kind, q.kind) : undefined,
    q.from ? gte(assessments.createdAt, new Date(q.from)) : undefined,
    q.to ? lte(assessments.createdAt, new Date(q.to)) : undefined,
  );
}

/** One assessment of the caller's mode as POST /v1/assess answered it, anchored or not. */
export async function getOutcome(tenant: Tenant, id: string): Promise<Outcome> {
  const [rows, anchored, review] = await tenant.batch((db) => [
    db
      .select({ record: recordJson })
      .from(assessments)
      .where(and(eq(assessments.id, id), eq(assessments.livemode, tenant.livemode))),
    db.select({ size: max(auditCheckpoints.treeSize) }).from(auditCheckpoints),
    db.select().from(reviews).where(eq(reviews.assessmentId, id)),
  ]);
  const { record } = orNotFound(rows[0]);
  const through = Number(anchored[0]?.size ?? 0);
  const refinement = refinementOf(review[0], record.verify_url);
  return toOutcome(record, record.audit_sequence <= through, refinement);
}
