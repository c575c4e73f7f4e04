import { and, eq, inArray, sql } from "drizzle-orm";
import type { Database } from "../db/client";
import { agentKeys, agents, assessments } from "../db/schema";
import { ApiError } from "../errors";
import type { SessionEventInput } from "./chain";
import { type SessionKey, signatureKid } from "./signature";

/** The distinct key ids the events' signatures name. */
export function kidsOf(events: readonly Pick<SessionEventInput, "signature">[]): string[] {
  const kids = events.map((e) => (e.signature ? signatureKid(e.signature) : null));
  return [...new Set(kids.filter((kid): kid is string => kid !== null))];
}

/** The org's keys with these thumbprints, whichever agent holds them (to tell why one fails). */
export function selectKeys(db: Database, kids: string[]) {
  return db
    .select({
      thumbprint: agentKeys.thumbprint,
      agentId: agentKeys.agentId,
      jwk: agentKeys.jwk,
      alg: agentKeys.alg,
      status: agentKeys.status,
      revokedAt: agentKeys.revokedAt,
      agentStatus: agents.status,
      agentRevokedAt: agents.revokedAt,
    })
    .from(agentKeys)
    .innerJoin(agents, eq(agents.id, agentKeys.agentId))
    .where(kids.length > 0 ? inArray(agentKeys.thumbprint, kids) : sql`false`);
}

type KeyRow = Omit<SessionKey, "agentRevokedAt"> & {
  agentStatus: string;
  agentRevokedAt: Date | null;
};

/** Keys by thumbprint; a revoked agent's keys carry its revocation (revocation is terminal). */
export function keyMap(rows: KeyRow[]): Map<string, SessionKey> {
  return new Map(
    rows.map(({ agentStatus, agentRevokedAt, ...key }) => [
      key.thumbprint,
      {
        ...key,
        agentRevokedAt: agentStatus === "revoked" ? (agentRevokedAt ?? new Date(0)) : null,
      },
    ]),
  );
}

function assessmentIdsOf(events: readonly SessionEventInput[]): string[] {
  const ids = events.map((e) => e.assessment_id).filter((id): id is string => Boolean(id));
  return [...new Set(ids)];
}

/** Which of the assessments the events link are the org's, in the caller's mode. */
export function selectLinkedAssessments(
  db: Database,
  events: readonly SessionEventInput[],
  livemode: boolean,
) {
  const ids = assessmentIdsOf(events);
  return db
    .select({ id: assessments.id })
    .from(assessments)
    .where(
      ids.length > 0
        ? and(inArray(assessments.id, ids), eq(assessments.livemode, livemode))
        : sql`false`,
    );
}

/** Refuses, naming every position, events that link an assessment the caller cannot see. */
export function assertAssessmentsKnown(
  events: readonly SessionEventInput[],
  found: readonly { id: string }[],
): void {
  const known = new Set(found.map((row) => row.id));
  const problems = events.flatMap((event, index) =>
    event.assessment_id && !known.has(event.assessment_id)
      ? [
          {
            path: `events.${index}.assessment_id`,
            message: "no such assessment in this organization and mode",
          },
        ]
      : [],
  );
  if (problems.length > 0) throw new ApiError("invalid_request", problems);
}
