import type { sessionEvents, sessions } from "../db/schema";
import type { Head, SessionEventInput } from "./chain";
import { signatureKid } from "./signature";

/**
 * Sessions and their events as the API shows them, and the ledger payloads they are recorded
 * under. Every payload is rebuilt from rows alone, so `/verify` can compare it with the digest
 * the ledger entry holds.
 */

export type SessionRow = typeof sessions.$inferSelect;
export type SessionEventRow = typeof sessionEvents.$inferSelect;

export function headOf(row: Pick<SessionRow, "headSequence" | "headHash">): Head {
  return { sequence: row.headSequence, hash: row.headHash };
}

export function toSession(row: SessionRow) {
  return {
    object: "session" as const,
    id: row.id,
    agent_id: row.agentId,
    external_id: row.externalId,
    require_signatures: row.requireSignatures,
    metadata: row.metadata,
    events: row.headSequence,
    signed_events: row.signedEvents,
    head: row.headHash === null ? null : { sequence: row.headSequence, hash: row.headHash },
    created: row.createdAt.toISOString(),
    updated: row.updatedAt.toISOString(),
    livemode: row.livemode,
    audit: { entry_id: row.auditEntryId, sequence: row.auditSequence },
  };
}

/** A stored event as the chain check reads it. */
export function eventInput(row: SessionEventRow): SessionEventInput {
  return {
    sequence: row.sequence,
    type: row.type,
    time: row.time.toISOString(),
    payload_digest: row.payloadDigest,
    prev_hash: row.prevHash,
    hash: row.hash,
    assessment_id: row.assessmentId,
    signature: row.signature,
  };
}

export function toSessionEvent(row: SessionEventRow, livemode: boolean) {
  return {
    object: "session_event" as const,
    session_id: row.sessionId,
    ...eventInput(row),
    assessment_id: row.assessmentId,
    signature: row.signature,
    kid: row.keyId,
    received_at: row.receivedAt.toISOString(),
    livemode,
    audit: { entry_id: row.auditEntryId, sequence: row.auditSequence },
  };
}

/** The facts of a session fixed at its creation. */
export interface SessionFacts {
  id: string;
  agentId: string;
  externalId: string;
  livemode: boolean;
  requireSignatures: boolean;
  metadata: Record<string, string>;
  createdAt: Date;
}

/**
 * What a batch's ledger entry records of its signatures: how many events are signed, and the
 * distinct key ids (sorted), so a signature stripped or re-attributed in the database is found.
 */
function signaturesOf(events: readonly SessionEventInput[]) {
  const kids = events.map((e) => (e.signature ? signatureKid(e.signature) : null));
  return {
    signed_events: events.filter((e) => e.signature).length,
    key_ids: [...new Set(kids.filter((kid): kid is string => kid !== null))].sort(),
  };
}

/** The `session.created` payload: the session and the head its first events reached. */
export function createdPayload(facts: SessionFacts, events: readonly SessionEventInput[]) {
  return {
    object: "session" as const,
    id: facts.id,
    agent_id: facts.agentId,
    external_id: facts.externalId,
    livemode: facts.livemode,
    require_signatures: facts.requireSignatures,
    metadata: facts.metadata,
    created: facts.createdAt.toISOString(),
    events: events.length,
    head_hash: events.at(-1)?.hash ?? null,
    ...signaturesOf(events),
  };
}

/** The `session.events_appended` payload: where the batch starts, ends and what it links to. */
export function appendedPayload(sessionId: string, events: readonly SessionEventInput[]) {
  const first = events[0];
  const last = events.at(-1);
  if (!first || !last) throw new Error("an appended batch has at least one event");
  return {
    object: "session_events" as const,
    session_id: sessionId,
    from: first.sequence,
    to: last.sequence,
    prev_hash: first.prev_hash,
    head_hash: last.hash,
    ...signaturesOf(events),
  };
}

/** The rows of a verified batch, written under the ledger entry that recorded it. */
export function eventRows(
  orgId: string,
  sessionId: string,
  events: readonly SessionEventInput[],
  receivedAt: Date,
  audit: { id: string; sequence: number },
  /** A rival batch's request writes these rows (see `session_events.written_by_rival`). */
  writtenByRival = false,
): SessionEventRow[] {
  return events.map((event) => ({
    orgId,
    sessionId,
    sequence: event.sequence,
    type: event.type,
    time: new Date(event.time),
    payloadDigest: event.payload_digest,
    prevHash: event.prev_hash,
    hash: event.hash,
    assessmentId: event.assessment_id ?? null,
    signature: event.signature ?? null,
    keyId: event.signature ? signatureKid(event.signature) : null,
    receivedAt,
    auditEntryId: audit.id,
    auditSequence: audit.sequence,
    writtenByRival,
  }));
}
