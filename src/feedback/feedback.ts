import type { z } from "@hono/zod-openapi";
import { and, asc, count, eq, sql } from "drizzle-orm";
import type { Tenant } from "../auth/tenant";
import { assessmentFeedback, assessments } from "../db/schema";
import { ApiError, orNotFound } from "../errors";
import { commit, ORPHANED } from "../ledger/commit";
import { newId } from "../lib/ids";
import { contributes, contributesQuery, nudge } from "../network/queue";
import {
  type AssessmentFeedback,
  type CreateFeedback,
  MAX_LABELS_PER_ASSESSMENT,
} from "../schemas/feedback";
import { clockTimeQuery } from "../test-clocks/clocks";
import { effectiveLabel, trustEffect } from "./labels";

export type FeedbackRow = typeof assessmentFeedback.$inferSelect;
type Body = z.infer<typeof CreateFeedback>;

/** How far ahead of the service's clock `occurred_at` may be (the sender's clock may run fast). */
export const FUTURE_SKEW_MS = 5 * 60_000;

export function toFeedback(row: FeedbackRow): z.infer<typeof AssessmentFeedback> {
  return {
    id: row.id,
    object: "assessment_feedback",
    assessment_id: row.assessmentId,
    livemode: row.livemode,
    label: row.label,
    occurred_at: row.occurredAt.toISOString(),
    source: row.source,
    note: row.note,
    created: row.createdAt.toISOString(),
    created_by:
      row.actorType !== null && row.actorId !== null
        ? { type: row.actorType, id: row.actorId }
        : null,
  };
}

/** The caller's assessment in its own mode, or 404 (another org's or mode's is not there). */
function sameAssessment(tenant: Tenant, id: string) {
  return and(eq(assessments.id, id), eq(assessments.livemode, tenant.livemode));
}

/**
 * Labels an assessment: one read (which authenticates, finds the assessment in the caller's
 * mode, counts its labels and reads the test clock named, if any), the ledger's
 * `assessment.feedback_added` entry, and one transaction writing the entry, the label and the
 * trust change it causes (moveTrust). With an `Idempotency-Key`, a retry within a day answers
 * the first label and writes nothing more. Under a test clock (test mode only) the label is
 * received at the clock's time (docs/feedback.md, "Under a test clock").
 */
export async function addFeedback(
  tenant: Tenant,
  assessmentId: string,
  body: Body,
  idempotencyKey: string | undefined,
): Promise<{ row: FeedbackRow; created: boolean }> {
  const clockId = body.test_clock;
  // As the assess path answers it (docs/assess.md, "Test clocks"), before anything is read.
  if (clockId !== undefined && tenant.livemode) {
    throw new ApiError("invalid_request", [
      { path: "test_clock", message: "test clocks are for test keys only" },
    ]);
  }
  const received = new Date();
  // Without a clock the sender's clock may run fast; a test clock's time is exact.
  if (clockId === undefined) refuseFuture(body.occurred_at, received.getTime() + FUTURE_SKEW_MS);
  const [found, labels, clock] = await tenant.batch((db) => [
    db
      .select({
        id: assessments.id,
        decision: assessments.decision,
        agentId: assessments.agentId,
        createdAt: assessments.createdAt,
        proven: sql<boolean>`coalesce((${assessments.inputs}->'identity'->>'proven')::boolean, false)`,
      })
      .from(assessments)
      .where(sameAssessment(tenant, assessmentId)),
    db
      .select({ n: count() })
      .from(assessmentFeedback)
      .where(eq(assessmentFeedback.assessmentId, assessmentId)),
    // A clock is the request's input: an unknown one is its 400, before the assessment's 404.
    ...(clockId === undefined ? [] : [clockTimeQuery(db, clockId)]),
  ]);
  // Under a clock the label is received at the clock's time: its `created`, and the `known_at`
  // of the payment's label the trigger writes (migration 0015), from which it counts.
  const now = clockId === undefined ? received : clockTime(clock?.[0]);
  if (clockId !== undefined) refuseFuture(body.occurred_at, now.getTime());
  const assessment = orNotFound(found[0]);
  if (clockId !== undefined && now.getTime() < assessment.createdAt.getTime()) {
    throw new ApiError("invalid_request", [
      {
        path: "test_clock",
        message: `the clock's time (${now.toISOString()}) is before the assessment (${assessment.createdAt.toISOString()}): a label is not known before its payment`,
      },
    ]);
  }
  const who = await tenant.caller();
  const draft: FeedbackRow = {
    id: newId(received.getTime()),
    orgId: who.orgId,
    assessmentId: assessment.id,
    livemode: tenant.livemode,
    label: body.label,
    occurredAt: new Date(body.occurred_at ?? now.toISOString()),
    source: body.source ?? null,
    note: body.note ?? null,
    actorType: who.actor.type,
    actorId: who.actor.id,
    createdAt: now,
  };
  const once = idempotencyKey
    ? `feedback:${tenant.livemode ? "live" : "test"}:${idempotencyKey}`
    : `feedback:${draft.id}`;
  // Refused before the ledger sees it, retries included: a refused label must leave no entry
  // in the audit trail (the ledger object would sequence one before the limit is checked), so
  // a retry of the label that reached the limit answers 409 too, not its first 201.
  const full = Number(labels[0]?.n ?? 0) >= MAX_LABELS_PER_ASSESSMENT;
  if (full) throw limitReached();
  const stored = async (id: string) => {
    const [again] = await tenant.batch((db) => [
      db.select().from(assessmentFeedback).where(eq(assessmentFeedback.id, id)),
    ]);
    return again[0];
  };
  const committed = await commit(
    tenant,
    {
      type: "assessment.feedback_added",
      subject: { type: "assessment_feedback", id: draft.id },
      payload: toFeedback(draft),
      terms: draft,
      once: [once],
    },
    (db, { terms, replayed }) => {
      const row = replayed ? revive(terms) : draft;
      if (row.assessmentId !== assessment.id) {
        throw new ApiError("invalid_request", [
          { path: "idempotency-key", message: "was used to label another assessment" },
        ]);
      }
      const effect = trustEffect(row.label, assessment.decision);
      // Test-mode labels and claimed (unproven) agents never move trust, as in assess itself.
      const moves = effect !== null && row.livemode && assessment.proven && assessment.agentId;
      return [
        db.insert(assessmentFeedback).values(row).onConflictDoNothing(),
        ...(moves && assessment.agentId
          ? [db.execute(moveTrust(row, assessment.agentId, effect))]
          : []),
        // Last: whether the org contributes this mode to the network (docs/network.md).
        contributesQuery(db, row.livemode),
      ];
    },
    {
      // The first label's row was written then, unless its writer died.
      expired: async (entry) => {
        const row = await stored(entry.subject?.id ?? draft.id);
        return row ? { row, created: false } : ORPHANED;
      },
    },
  );
  if (!("entry" in committed)) return committed;
  const { terms, replayed, results } = committed;
  if (contributes(results.at(-1))) {
    nudge(tenant.env, (work) => tenant.later(work), {
      org_id: who.orgId,
      livemode: tenant.livemode,
    });
  }
  return { row: replayed ? revive(terms) : draft, created: !replayed };
}

/** `occurred_at` later than `latest` (ms) is the caller's to fix. */
function refuseFuture(occurredAt: string | undefined, latest: number) {
  if (occurredAt !== undefined && Date.parse(occurredAt) > latest) {
    throw new ApiError("invalid_request", [
      { path: "occurred_at", message: "must not be in the future" },
    ]);
  }
}

/** The named clock's time, or 400: another org's clock, like a deleted one, is none. */
function clockTime(row: { frozenTime: Date } | undefined): Date {
  if (row === undefined) {
    throw new ApiError("invalid_request", [{ path: "test_clock", message: "no such test clock" }]);
  }
  return row.frozenTime;
}

function limitReached() {
  return new ApiError("feedback_limit_reached", {
    message: `an assessment takes at most ${MAX_LABELS_PER_ASSESSMENT} labels`,
  });
}

/** The first caller's draft, back from the ledger's JSON. */
function revive(terms: FeedbackRow): FeedbackRow {
  return {
    ...terms,
    occurredAt: new Date(terms.occurredAt),
    createdAt: new Date(terms.createdAt),
  };
}

/**
 * Moves the agent's trust once per assessment and direction: the marker's primary key admits
 * one insert, and only the statement that made it bumps the evidence counter, so a repeated
 * label or a concurrent duplicate changes nothing. The trust trigger derives the new score and
 * writes the trust-history entry, whose reason names the label and the assessment.
 */
function moveTrust(row: FeedbackRow, agentId: string, effect: "lowered" | "raised") {
  const counter =
    effect === "lowered"
      ? sql`confirmed_frauds = a.confirmed_frauds + 1`
      : sql`confirmed_legitimate = a.confirmed_legitimate + 1`;
  const reason = `feedback.${row.label}:${row.assessmentId}`;
  return sql`with marked as (
      insert into agent_trust_outcomes (assessment_id, effect, agent_id, feedback_id)
      values (${row.assessmentId}::uuid, ${effect}, ${agentId}::uuid, ${row.id}::uuid)
      on conflict do nothing
      returning agent_id
    )
    update agents a set ${counter}, trust_reason = ${reason}
    from marked where a.id = marked.agent_id`;
}

/** Every label of the caller's assessment, oldest first, with its effective label. */
export async function listFeedback(tenant: Tenant, assessmentId: string) {
  const [found, rows] = await tenant.batch((db) => [
    db.select({ id: assessments.id }).from(assessments).where(sameAssessment(tenant, assessmentId)),
    db
      .select()
      .from(assessmentFeedback)
      .where(
        and(
          eq(assessmentFeedback.assessmentId, assessmentId),
          eq(assessmentFeedback.livemode, tenant.livemode),
        ),
      )
      .orderBy(asc(assessmentFeedback.createdAt), asc(assessmentFeedback.id)),
  ]);
  orNotFound(found[0]);
  const effective = effectiveLabel(rows);
  return {
    object: "list" as const,
    data: rows.map(toFeedback),
    has_more: false as const,
    next_cursor: null,
    effective_label: effective.label,
    pending: effective.pending,
  };
}
