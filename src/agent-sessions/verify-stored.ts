import { and, asc, eq, inArray } from "drizzle-orm";
import { payloadDigest } from "#audit/digest";
import type { Tenant } from "../auth/tenant";
import { auditEntries, sessionEvents, sessions } from "../db/schema";
import { orNotFound } from "../errors";
import { type ChainBreak, firstBreak, type SessionEventInput } from "./chain";
import { keyMap, kidsOf, selectKeys } from "./lookups";
import {
  appendedPayload,
  createdPayload,
  eventInput,
  type SessionEventRow,
  type SessionRow,
} from "./records";

type EntryRow = { sequence: number; type: string; digest: string };

const CREATED = "session.created";
const APPENDED = "session.events_appended";

/**
 * Re-verifies a stored session from its rows, as an auditor would: the chain (positions, links,
 * hashes, recorded keys, signatures with the keys as they stood when each event was received),
 * the head and signed count the session row claims, and the batches one to one against the
 * ledger entries recorded for the session. So a row changed, dropped or stripped of its
 * signature in the database, even with every hash recomputed and the head rolled back, is
 * found: the ledger is itself hash-chained and anchored. Answers the earliest break.
 */
export async function verifyStored(tenant: Tenant, sessionId: string) {
  const [found, rows, entries] = await tenant.batch((db) => [
    db
      .select()
      .from(sessions)
      .where(and(eq(sessions.id, sessionId), eq(sessions.livemode, tenant.livemode))),
    db
      .select()
      .from(sessionEvents)
      .where(eq(sessionEvents.sessionId, sessionId))
      .orderBy(asc(sessionEvents.sequence)),
    db
      .select({
        sequence: auditEntries.sequence,
        type: auditEntries.type,
        digest: auditEntries.digest,
      })
      .from(auditEntries)
      .where(
        and(
          eq(auditEntries.subjectType, "session"),
          eq(auditEntries.subjectId, sessionId),
          inArray(auditEntries.type, [CREATED, APPENDED]),
        ),
      )
      .orderBy(asc(auditEntries.sequence)),
  ]);
  const session = orNotFound(found[0]);
  // The keys both the recorded key ids and the signatures' headers name.
  const kids = [
    ...new Set([
      ...kidsOf(rows),
      ...rows.map((r) => r.keyId).filter((k): k is string => k !== null),
    ]),
  ];
  const [keys] =
    kids.length > 0 ? await tenant.batch((db) => [selectKeys(db, kids)]) : [[] as never[]];
  const events = rows.map(eventInput);
  const chain = await firstBreak(
    { ...session, keys: keyMap(keys) },
    { sequence: 0, hash: null },
    events,
    (index) => {
      const row = rows[index] as SessionEventRow;
      return { receivedAt: row.receivedAt, keyId: row.keyId };
    },
  );
  // The rows themselves first; then, only for rows consistent in themselves, what the session
  // row claims; then what the ledger recorded of each batch, which catches a rewrite that
  // recomputed every hash, a stripped signature, or a whole batch dropped with the head.
  const first =
    missing(chain) ??
    headMismatch(session, rows) ??
    signedMismatch(session, rows) ??
    ledgerMismatch(session, rows, events, entries);
  return {
    object: "session_verification" as const,
    session_id: session.id,
    ok: first === null,
    checked: rows.length,
    signed_events: rows.filter((r) => r.signature !== null).length,
    head:
      session.headHash === null ? null : { sequence: session.headSequence, hash: session.headHash },
    first_break: first,
    verified_at: new Date().toISOString(),
    livemode: session.livemode,
  };
}

/** Among stored rows a sequence gap is a missing event, reported at the sequence missing. */
function missing(chain: ChainBreak | null): ChainBreak | null {
  if (chain?.reason !== "sequence_gap") return chain;
  return { ...chain, sequence: chain.expected as number, reason: "missing_event" };
}

/** The session row's head must be the last stored event (a dropped tail shows here). */
function headMismatch(session: SessionRow, rows: SessionEventRow[]): ChainBreak | null {
  const last = rows.at(-1);
  const actual = { sequence: last?.sequence ?? 0, hash: last?.hash ?? null };
  if (actual.sequence === session.headSequence && actual.hash === session.headHash) return null;
  return {
    sequence: Math.min(actual.sequence, session.headSequence) + 1,
    index: rows.length,
    reason: "head_mismatch",
    expected: { sequence: session.headSequence, hash: session.headHash },
    actual,
  };
}

/** The session row's count of signed events must be the rows' (a stripped signature). */
function signedMismatch(session: SessionRow, rows: SessionEventRow[]): ChainBreak | null {
  const signed = rows.filter((r) => r.signature !== null).length;
  if (signed === session.signedEvents) return null;
  const index = Math.max(rows.length - 1, 0);
  return {
    sequence: rows[index]?.sequence ?? 0,
    index,
    reason: "signed_events_mismatch",
    expected: session.signedEvents,
    actual: signed,
  };
}

/**
 * The batches (rows grouped by the ledger entry they name) and the session's ledger entries,
 * one to one and in order: the creation first, then every append, each batch hashing to the
 * digest its entry holds, and the latest entry the one the session row names. An entry without
 * rows is `missing_batch`; anything else that differs is `ledger_mismatch`.
 */
function ledgerMismatch(
  session: SessionRow,
  rows: SessionEventRow[],
  events: SessionEventInput[],
  entries: EntryRow[],
): ChainBreak | null {
  const batches = new Map<number, number[]>();
  rows.forEach((row, index) => {
    const batch = batches.get(row.auditSequence) ?? [];
    batch.push(index);
    batches.set(row.auditSequence, batch);
  });
  const at = (index: number, expected: unknown, actual: unknown): ChainBreak => ({
    sequence: (rows[index]?.sequence ?? rows.length) + (index >= rows.length ? 1 : 0),
    index,
    reason: "ledger_mismatch",
    expected,
    actual,
  });
  let next = 0; // the index of the first row no entry has accounted for yet
  for (const [position, entry] of entries.entries()) {
    const sequence = Number(entry.sequence);
    const created = position === 0;
    const expected = { audit_sequence: sequence, digest: entry.digest };
    const type = created ? CREATED : APPENDED;
    if (entry.type !== type || (created && sequence !== session.createdAuditSequence)) {
      return at(
        next,
        { audit_sequence: sequence, type },
        { audit_sequence: sequence, type: entry.type },
      );
    }
    const indexes = batches.get(sequence) ?? [];
    batches.delete(sequence);
    if (!created && indexes.length === 0) {
      return {
        sequence: (rows[next - 1]?.sequence ?? 0) + 1,
        index: next,
        reason: "missing_batch",
        expected,
        actual: null,
      };
    }
    if (indexes[0] !== undefined && indexes[0] !== next) {
      return at(next, expected, { audit_sequence: Number(rows[next]?.auditSequence ?? 0) });
    }
    const batch = indexes.map((i) => events[i] as SessionEventInput);
    const payload = created ? createdPayload(session, batch) : appendedPayload(session.id, batch);
    const digest = payloadDigest(payload);
    if (digest !== entry.digest) return at(next, expected, { audit_sequence: sequence, digest });
    next += indexes.length;
  }
  // Rows no entry of this session recorded (or recorded under another type or subject).
  if (next < rows.length) {
    const row = rows[next] as SessionEventRow;
    return at(next, null, { audit_sequence: row.auditSequence });
  }
  const latest = entries.at(-1);
  if (!latest || Number(latest.sequence) !== session.auditSequence) {
    return at(rows.length, latest ? { audit_sequence: Number(latest.sequence) } : null, {
      audit_sequence: session.auditSequence,
    });
  }
  return null;
}
