import { and, desc, eq, gte, inArray, lt, lte, max, or, type SQL, sql } from "drizzle-orm";
import type { Tenant } from "../auth/tenant";
import { decodeIdCursor, type Page, page } from "../db/pagination";
import { agents, assessments, auditCheckpoints, reviews } from "../db/schema";
import { orNotFound } from "../errors";
import { isUuid } from "../lib/ids";
import type { AssessmentSummary } from "../schemas/assessments";
import type { ActionKind } from "../schemas/vocabulary";
import {
  payeeIdOf,
  payeeNameOf,
  presentSummaries,
  selectSummaries,
  transactionIdOf,
} from "./assessment-summary";
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

/** The filters of GET /v1/assessments (docs/assess.md, "Listing assessments"). */
export interface AssessmentFilters {
  limit: number;
  cursor?: string | undefined;
  status?: keyof typeof STATUS_FILTER | undefined;
  agent?: string | undefined;
  kind?: ActionKind | undefined;
  from?: string | undefined;
  to?: string | undefined;
  q?: string | undefined;
  payee?: string | undefined;
  currency?: string | undefined;
  amount_gte?: number | undefined;
  amount_lte?: number | undefined;
  score_gte?: number | undefined;
  score_lte?: number | undefined;
}

/**
 * A page of the caller's mode's assessments as summaries, newest first, by the filters asked:
 * one statement (which also authenticates), keyset by the UUIDv7 id whatever the filters.
 */
export async function listAssessmentSummaries(
  tenant: Tenant,
  q: AssessmentFilters,
): Promise<Page<AssessmentSummary>> {
  const after = decodeIdCursor(q.cursor);
  // Test and live data are apart, as at Stripe: a key sees its own mode only.
  const filters: (SQL | undefined)[] = [
    eq(assessments.livemode, tenant.livemode),
    after ? lt(assessments.id, after) : undefined,
    q.status ? eq(assessments.decision, STATUS_FILTER[q.status]) : undefined,
    q.agent ? eq(assessments.agentId, q.agent.toLowerCase()) : undefined,
    q.kind ? eq(assessments.kind, q.kind) : undefined,
    q.from ? gte(assessments.createdAt, new Date(q.from)) : undefined,
    q.to ? lte(assessments.createdAt, new Date(q.to)) : undefined,
    q.q ? searchOf(q.q) : undefined,
    q.payee ? eq(payeeIdOf, q.payee) : undefined,
    q.currency ? eq(assessments.currency, q.currency) : undefined,
    q.amount_gte !== undefined ? gte(assessments.amount, q.amount_gte) : undefined,
    q.amount_lte !== undefined ? lte(assessments.amount, q.amount_lte) : undefined,
    q.score_gte !== undefined ? gte(assessments.riskScore, q.score_gte) : undefined,
    q.score_lte !== undefined ? lte(assessments.riskScore, q.score_lte) : undefined,
  ];
  const [rows] = await tenant.batch((db) => [
    selectSummaries(db)
      .where(and(...filters))
      .orderBy(desc(assessments.id))
      .limit(q.limit + 1),
  ]);
  const found = page(rows, q.limit, (row) => row.id);
  return { ...found, data: await presentSummaries(tenant.env, found.data) };
}

/** `\`, `%` and `_` taken literally by LIKE (with `escape '\'`). */
function literalPrefix(text: string): string {
  return `${text.toLowerCase().replace(/[\\%_]/g, "\\$&")}%`;
}

/**
 * The one search box: exact ids (the assessment, its transaction, its payee, its agent) and
 * name prefixes (the payee's, the agent's), case-insensitive. Each arm has its index
 * (drizzle/0020_assessment_search.sql); the agent's name is looked up among the org's agents.
 */
function searchOf(text: string): SQL | undefined {
  const prefix = literalPrefix(text);
  const arms: SQL[] = [
    eq(transactionIdOf, text),
    eq(payeeIdOf, text),
    sql`lower(${payeeNameOf}) like ${prefix} escape '\\'`,
    inArray(
      assessments.agentId,
      sql`(select ${agents.id} from ${agents} where lower(${agents.name}) like ${prefix} escape '\\')`,
    ),
  ];
  if (isUuid(text)) {
    const id = text.toLowerCase();
    arms.push(eq(assessments.id, id), eq(assessments.agentId, id));
  }
  return or(...arms);
}

/** The summaries of the given assessments of the caller's mode (a review page's), by id. */
export async function summariesById(
  tenant: Tenant,
  ids: string[],
): Promise<Map<string, AssessmentSummary>> {
  if (ids.length === 0) return new Map();
  const [rows] = await tenant.batch((db) => [
    selectSummaries(db).where(
      and(eq(assessments.livemode, tenant.livemode), inArray(assessments.id, ids)),
    ),
  ]);
  const summaries = await presentSummaries(tenant.env, rows);
  return new Map(summaries.map((summary) => [summary.id, summary]));
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
