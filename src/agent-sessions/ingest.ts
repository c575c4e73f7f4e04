import { and, asc, between, eq } from "drizzle-orm";
import { canonicalize } from "#audit/canonical";
import type { Tenant } from "../auth/tenant";
import { agents, sessionEvents, sessions } from "../db/schema";
import { ApiError, orNotFound } from "../errors";
import { commit } from "../ledger/commit";
import { newId } from "../lib/ids";
import { MAX_EVENTS_PER_SESSION } from "../schemas/sessions";
import {
  type ChainBreak,
  firstBreak,
  type Head,
  nonConsecutive,
  type SessionEventInput,
  ZERO_HASH,
} from "./chain";
import {
  assertAssessmentsKnown,
  keyMap,
  kidsOf,
  selectKeys,
  selectLinkedAssessments,
} from "./lookups";
import { appendedPayload, createdPayload, headOf, type SessionRow } from "./records";
import {
  type AppendDraft,
  appendWrites,
  appendWritten,
  type CreationDraft,
  creationWrites,
  creationWritten,
} from "./writes";

export interface CreateSessionBody {
  agent_id: string;
  external_id: string;
  require_signatures: boolean;
  metadata: Record<string, string>;
  events: SessionEventInput[];
}

/** What an ingestion answers: the session as it stands, and whether this call changed it. */
export interface Ingested {
  session: SessionRow;
  created: boolean;
}

function chainBroken(found: ChainBreak): ApiError {
  return new ApiError("session_chain_broken", found);
}

/** Whether the stored hashes are exactly the batch's, position by position. */
function sameHashes(
  stored: readonly { sequence: number; hash: string }[],
  batch: readonly SessionEventInput[],
): boolean {
  const bySequence = new Map(stored.map((e) => [e.sequence, e.hash]));
  return batch.every((event) => bySequence.get(event.sequence) === event.hash);
}

function creationOnceKey(livemode: boolean, agentId: string, externalId: string): string {
  return `session.created:${livemode ? "live" : "test"}:${agentId}:${externalId}`;
}

/**
 * Creates a session with its first events (zero or more), verified as a chain from the start.
 * The ledger object's `once` key is the session's natural key (mode, agent, external id), so
 * exactly one creation per key is ever recorded, whatever the concurrency: a loser finishes
 * the winner's write and answers 200 when it sent the same session, else 409 `session_exists`.
 */
export async function createSession(tenant: Tenant, body: CreateSessionBody): Promise<Ingested> {
  const now = new Date();
  const livemode = tenant.livemode;
  const natural = and(
    eq(sessions.livemode, livemode),
    eq(sessions.agentId, body.agent_id),
    eq(sessions.externalId, body.external_id),
  );
  const [agent, existing, storedEvents, keys, linked] = await tenant.batch((db) => [
    db.select({ id: agents.id }).from(agents).where(eq(agents.id, body.agent_id)),
    db.select().from(sessions).where(natural),
    // The events the creation recorded: those written under its ledger entry.
    db
      .select({ sequence: sessionEvents.sequence, hash: sessionEvents.hash })
      .from(sessionEvents)
      .innerJoin(sessions, eq(sessions.id, sessionEvents.sessionId))
      .where(and(natural, eq(sessionEvents.auditSequence, sessions.createdAuditSequence)))
      .orderBy(asc(sessionEvents.sequence)),
    selectKeys(db, kidsOf(body.events)),
    selectLinkedAssessments(db, body.events, livemode),
  ]);
  if (!agent[0]) {
    throw new ApiError("invalid_request", [{ path: "agent_id", message: "no such agent" }]);
  }
  const gap = nonConsecutive(body.events);
  if (gap) throw chainBroken(gap);
  const earlier = existing[0];
  if (earlier) return { session: sameCreation(earlier, storedEvents, body), created: false };
  assertAssessmentsKnown(body.events, linked);
  const found = await firstBreak(
    {
      externalId: body.external_id,
      agentId: body.agent_id,
      livemode,
      requireSignatures: body.require_signatures,
      keys: keyMap(keys),
    },
    { sequence: 0, hash: null },
    body.events,
  );
  if (found) throw chainBroken(found);

  const who = await tenant.caller();
  const draft: CreationDraft = {
    facts: {
      id: newId(now.getTime()),
      agentId: body.agent_id,
      externalId: body.external_id,
      livemode,
      requireSignatures: body.require_signatures,
      metadata: body.metadata,
      createdAt: now.toISOString(),
    },
    events: body.events,
  };
  const facts = { ...draft.facts, createdAt: now };
  const committed = await commit(
    tenant,
    {
      type: "session.created",
      subject: { type: "session", id: facts.id },
      payload: createdPayload(facts, body.events),
      terms: draft,
      once: [creationOnceKey(livemode, body.agent_id, body.external_id)],
    },
    (db, { entry, terms: winner }) => creationWrites(db, who.orgId, winner, entry),
    {
      expired: async (entry) => {
        throw new ApiError("session_exists", { id: entry.subject?.id });
      },
    },
  );
  const { terms: winner, replayed } = committed;
  const written = creationWritten(committed.results);
  // A racing twin that finished this very creation first wrote it: then this is a replay.
  if (!replayed) return { session: written.session, created: written.inserted };
  // Another creation of this session was recorded first (a retry, or a racing twin): its
  // write, which may never have landed, is finished; this request is judged against it.
  const winnerHashes = winner.events.map((e) => ({ sequence: e.sequence, hash: e.hash }));
  // 201 only when this request's write is the one that stored the session.
  return {
    session: sameCreation(written.session, winnerHashes, body),
    created: written.inserted,
  };
}

/**
 * The stored session when the request is a retry of its creation (exactly the events the
 * creation recorded, by hash), else 409 naming it.
 */
function sameCreation(
  stored: SessionRow,
  createdHashes: readonly { sequence: number; hash: string }[],
  body: CreateSessionBody,
): SessionRow {
  const same =
    stored.requireSignatures === body.require_signatures &&
    canonicalize(stored.metadata) === canonicalize(body.metadata) &&
    createdHashes.length === body.events.length &&
    sameHashes(createdHashes, body.events);
  if (!same) throw new ApiError("session_exists", { id: stored.id });
  return stored;
}

export interface AppendBody {
  events: [SessionEventInput, ...SessionEventInput[]];
}

/**
 * Appends a batch that continues the head. A batch already stored (same hashes at the same
 * positions) answers 200 unchanged; one that starts at or before the head otherwise, or that
 * loses a race, answers 409 `session_conflict` with the head. One batch per starting position
 * is ever recorded (the `once` key), and the head moves only by a conditional UPDATE.
 */
export async function appendEvents(
  tenant: Tenant,
  sessionId: string,
  body: AppendBody,
): Promise<Ingested> {
  const now = new Date();
  const livemode = tenant.livemode;
  const first = body.events[0];
  const to = first.sequence + body.events.length - 1;
  const [found, stored, keys, linked] = await tenant.batch((db) => [
    db
      .select()
      .from(sessions)
      .where(and(eq(sessions.id, sessionId), eq(sessions.livemode, livemode))),
    db
      .select({ sequence: sessionEvents.sequence, hash: sessionEvents.hash })
      .from(sessionEvents)
      .where(
        and(
          eq(sessionEvents.sessionId, sessionId),
          between(sessionEvents.sequence, first.sequence, to),
        ),
      )
      .orderBy(asc(sessionEvents.sequence)),
    selectKeys(db, kidsOf(body.events)),
    selectLinkedAssessments(db, body.events, livemode),
  ]);
  const session = orNotFound(found[0]);
  // Sequences run consecutively within a batch, before it is compared with anything stored.
  const gap = nonConsecutive(body.events);
  if (gap) throw chainBroken(gap);
  if (first.sequence <= session.headSequence) {
    if (sameHashes(stored, body.events)) return { session, created: false };
    throw conflict(headOf(session));
  }
  assertAssessmentsKnown(body.events, linked);
  if (session.headSequence + body.events.length > MAX_EVENTS_PER_SESSION) {
    throw new ApiError("invalid_request", [
      { path: "events", message: `a session holds at most ${MAX_EVENTS_PER_SESSION} events` },
    ]);
  }
  const broken = await firstBreak({ ...session, keys: keyMap(keys) }, headOf(session), body.events);
  if (broken) throw chainBroken(broken);

  const who = await tenant.caller();
  const draft: AppendDraft = { receivedAt: now.toISOString(), events: body.events };
  const payload = appendedPayload(sessionId, body.events);
  const sameBatch = (winner: AppendDraft) =>
    winner.events.length === body.events.length && sameHashes(winner.events, body.events);
  const committed = await commit(
    tenant,
    {
      type: "session.events_appended",
      subject: { type: "session", id: sessionId },
      payload,
      terms: draft,
      once: [`session.events_appended:${sessionId}:${first.sequence}`],
    },
    // A batch from this position was recorded first when replayed: its write is finished here
    // (its caller may have died before it), marked as a rival's when it is not this batch.
    (db, { entry, terms: winner }) =>
      appendWrites(db, who.orgId, sessionId, winner, entry, !sameBatch(winner)),
    {
      // The first batch's terms expired and its entry's digest is not this batch's (the
      // ledger finishes this very batch with its own terms): another batch took the position.
      expired: async () => {
        throw conflict(headOf(session));
      },
    },
  );
  const { terms: winner, replayed } = committed;
  const written = appendWritten(committed.results);
  if (!replayed) {
    if (written.moved) return { session: written.session, created: true };
    // The head did not move: another request finished this batch first (the `once` key lets
    // no other batch take this position), or the head is elsewhere. This request recorded
    // the batch, so it answers 201 when a rival finished it (the rival answers 409); when a
    // twin of this very batch did, the twin answered 201 and this is a replay.
    if (written.atTo?.hash === body.events.at(-1)?.hash) {
      return { session: written.session, created: written.atTo?.writtenByRival === true };
    }
    throw conflict(headOf(written.session));
  }
  if (!sameBatch(winner)) throw conflict(headOf(written.session));
  // 201 only when this request's write is the one that moved the head (it finished the batch).
  return { session: written.session, created: written.moved };
}

function conflict(head: Head): ApiError {
  return new ApiError("session_conflict", {
    head: { sequence: head.sequence, hash: head.hash ?? ZERO_HASH },
    message: "the batch does not continue the session's head: append from head.sequence + 1",
  });
}
