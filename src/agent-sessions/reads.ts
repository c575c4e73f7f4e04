import { and, asc, desc, eq, gt, inArray } from "drizzle-orm";
import type { Tenant } from "../auth/tenant";
import { decodeSequenceCursor, listById, mapPage, page } from "../db/pagination";
import { assessments, sessionEvents, sessions } from "../db/schema";
import { ApiError, orNotFound } from "../errors";
import { MAX_EVENTS_PER_SESSION } from "../schemas/sessions";
import { headOf, toSession, toSessionEvent } from "./records";

/** A page of the caller's mode's sessions, newest first, by agent and external id if asked. */
export async function listSessions(
  tenant: Tenant,
  query: {
    limit: number;
    cursor?: string | undefined;
    agent_id?: string | undefined;
    external_id?: string | undefined;
  },
) {
  const { limit, cursor, agent_id, external_id } = query;
  const list = await listById(
    tenant,
    sessions,
    { limit, cursor },
    agent_id ? eq(sessions.agentId, agent_id) : undefined,
    external_id ? eq(sessions.externalId, external_id) : undefined,
  );
  return mapPage(list, toSession);
}

/** One session of the caller's mode, with where its verification stands and its assessments. */
export async function getSession(tenant: Tenant, id: string) {
  const livemode = tenant.livemode;
  const [found, linked] = await tenant.batch((db) => [
    db
      .select()
      .from(sessions)
      .where(and(eq(sessions.id, id), eq(sessions.livemode, livemode))),
    db
      .select({
        id: assessments.id,
        decision: assessments.decision,
        riskScore: assessments.riskScore,
        createdAt: assessments.createdAt,
      })
      .from(assessments)
      .where(
        and(
          eq(assessments.livemode, livemode),
          inArray(
            assessments.id,
            db
              .select({ id: sessionEvents.assessmentId })
              .from(sessionEvents)
              .where(eq(sessionEvents.sessionId, id)),
          ),
        ),
      )
      .orderBy(desc(assessments.id))
      .limit(100),
  ]);
  const row = orNotFound(found[0]);
  const head = headOf(row);
  return {
    ...toSession(row),
    verification: {
      status: "verified" as const,
      // Each batch was verified when accepted; the rows are not re-read here (see verify).
      basis: "ingestion" as const,
      events: row.headSequence,
      signed_events: row.signedEvents,
      head: head.hash === null ? null : { sequence: head.sequence, hash: head.hash },
      verified_at: row.updatedAt.toISOString(),
      verify_url: `/v1/sessions/${row.id}/verify`,
    },
    assessments: linked.map((a) => ({
      id: a.id,
      decision: a.decision,
      risk_score: a.riskScore,
      created: a.createdAt.toISOString(),
    })),
  };
}

/** A page of a session's events in sequence order (404: no such session in this mode). */
export async function sessionEventsPage(
  tenant: Tenant,
  id: string,
  query: { limit: number; cursor?: string | undefined },
) {
  const { limit, cursor } = query;
  const after = decodeSequenceCursor(cursor);
  // Sequences stop at the session limit (and the column is int4): past it, no cursor of ours.
  if (after !== null && after > MAX_EVENTS_PER_SESSION) {
    throw new ApiError("invalid_cursor", [
      { path: "cursor", message: "not a cursor from this API" },
    ]);
  }
  const livemode = tenant.livemode;
  const [found, rows] = await tenant.batch((db) => [
    db
      .select({ id: sessions.id })
      .from(sessions)
      .where(and(eq(sessions.id, id), eq(sessions.livemode, livemode))),
    db
      .select()
      .from(sessionEvents)
      .where(
        and(
          eq(sessionEvents.sessionId, id),
          after === null ? undefined : gt(sessionEvents.sequence, after),
        ),
      )
      .orderBy(asc(sessionEvents.sequence))
      .limit(limit + 1),
  ]);
  orNotFound(found[0]);
  return page(
    rows.map((r) => toSessionEvent(r, livemode)),
    limit,
    (e) => e.sequence,
  );
}
