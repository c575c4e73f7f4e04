import { and, eq, sql } from "drizzle-orm";
import type { BatchResponse } from "drizzle-orm/batch";
import type { Database } from "../db/client";
import { columnJson } from "../db/column-json";
import { sessionEvents, sessions } from "../db/schema";
import { ApiError, orNotFound } from "../errors";
import type { StoredEntry } from "../ledger/ledger-store";
import type { SessionEventInput } from "./chain";
import { eventRows, type SessionFacts, type SessionRow } from "./records";

// The statements a session's creation and its appends write with their ledger entry
// (ingest.ts commits them), and what their results say.

export /** What a creation hands the ledger object, so a retry or a racing twin can finish its write. */
interface CreationDraft {
  facts: Omit<SessionFacts, "createdAt"> & { createdAt: string };
  events: SessionEventInput[];
}

export interface AppendDraft {
  receivedAt: string;
  events: SessionEventInput[];
}

/** A creation's writes (idempotent: a twin may be writing the same), the session read last. */
export function creationWrites(
  db: Database,
  orgId: string,
  draft: CreationDraft,
  entry: StoredEntry,
) {
  const { facts, events } = draft;
  const createdAt = new Date(facts.createdAt);
  const audit = { id: entry.id, sequence: entry.sequence };
  const last = events.at(-1);
  const row: SessionRow = {
    ...facts,
    orgId,
    createdAt,
    updatedAt: createdAt,
    headSequence: last?.sequence ?? 0,
    headHash: last?.hash ?? null,
    signedEvents: events.filter((e) => e.signature).length,
    createdAuditEntryId: entry.id,
    createdAuditSequence: entry.sequence,
    auditEntryId: entry.id,
    auditSequence: entry.sequence,
  };
  const rows = eventRows(orgId, facts.id, events, createdAt, audit);
  const json = `[${rows.map((row) => columnJson(sessionEvents, row)).join(",")}]`;
  return [
    db.insert(sessions).values(row).onConflictDoNothing().returning({ id: sessions.id }),
    db.execute(sql`
      ${insertEventsFrom(json)}
      where exists (select 1 from sessions where id = ${facts.id} and created_audit_sequence = ${entry.sequence})
      on conflict do nothing`),
    db.select().from(sessions).where(eq(sessions.id, facts.id)),
  ] as const;
}

/** The session a creation's writes left, and whether they inserted it. */
export function creationWritten([inserted, , stored]: BatchResponse<
  ReturnType<typeof creationWrites>
>): {
  session: SessionRow;
  inserted: boolean;
} {
  const session = stored[0];
  if (!session) throw new ApiError("internal_error");
  return { session, inserted: inserted.length > 0 };
}

/**
 * Inserts event rows given as JSON, `received_at` taken from the database clock of the writing
 * transaction: the clock key and agent revocations (`revoked_at`) are written with, so `/verify`
 * compares instants from one clock.
 */
function insertEventsFrom(json: string) {
  return sql`
    insert into session_events (org_id, session_id, sequence, type, time, payload_digest,
      prev_hash, hash, assessment_id, signature, key_id, received_at, audit_entry_id,
      audit_sequence, written_by_rival)
    select org_id, session_id, sequence, type, time, payload_digest, prev_hash, hash,
      assessment_id, signature, key_id, now(), audit_entry_id, audit_sequence, written_by_rival
    from json_populate_recordset(null::session_events, ${json}::json)`;
}

/**
 * An append's writes, after its ledger entry in the same transaction: the head moved only if it
 * is still where the batch starts, and the events inserted only if it moved (`byRival`: by a
 * request that sent another batch); then the session and the batch's last event as they stand.
 */
export function appendWrites(
  db: Database,
  orgId: string,
  sessionId: string,
  draft: AppendDraft,
  entry: StoredEntry,
  byRival: boolean,
) {
  const receivedAt = new Date(draft.receivedAt);
  const first = draft.events[0];
  const last = draft.events.at(-1);
  if (!first || !last) throw new ApiError("internal_error");
  const rows = eventRows(orgId, sessionId, draft.events, receivedAt, entry, byRival);
  const json = `[${rows.map((row) => columnJson(sessionEvents, row)).join(",")}]`;
  const signed = draft.events.filter((e) => e.signature).length;
  const prevHash = first.sequence === 1 ? null : first.prev_hash;
  return [
    db.execute(sql`
      with moved as (
        update sessions s set head_sequence = ${last.sequence}, head_hash = ${last.hash},
          signed_events = s.signed_events + ${signed}, updated_at = now(),
          audit_entry_id = ${entry.id}, audit_sequence = ${entry.sequence}
        where s.id = ${sessionId} and s.head_sequence = ${first.sequence - 1}
          and s.head_hash is not distinct from ${prevHash}
        returning s.id
      ), inserted as (
        ${insertEventsFrom(json)}
        where exists (select 1 from moved)
        returning 1
      )
      select count(*)::int as moved from moved`),
    db.select().from(sessions).where(eq(sessions.id, sessionId)),
    db
      .select({ hash: sessionEvents.hash, writtenByRival: sessionEvents.writtenByRival })
      .from(sessionEvents)
      .where(
        and(eq(sessionEvents.sessionId, sessionId), eq(sessionEvents.sequence, last.sequence)),
      ),
  ] as const;
}

/**
 * The session after an append's writes, whether they moved it, and the event at the batch's
 * end as stored (by whichever request wrote it).
 */
export function appendWritten([moved, after, atTo]: BatchResponse<
  ReturnType<typeof appendWrites>
>) {
  const session = orNotFound(after[0]);
  const count = (moved as unknown as { rows: { moved: number }[] }).rows[0]?.moved ?? 0;
  return { session, moved: count > 0, atTo: atTo[0] ?? null };
}
