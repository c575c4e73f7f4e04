import { eq, sql } from "drizzle-orm";
import { assessments, auditEntries, events, mandates } from "../db/schema";
import { orgBatch } from "../db/tenant";
import type { AppContext } from "../http/context";
import { auditEntryRow } from "../ledger/ledger-postgres";
import type { StoredEntry } from "../ledger/ledger-store";
import type { AssessmentRecord } from "./outcome";

/**
 * Everything one assessment writes, decided before anything is written. It travels with the
 * ledger append (as its attachment), so a retry or a racing duplicate writes exactly this and
 * answers exactly this: same ids, same signature.
 */
export interface PersistPlan {
  record: Omit<AssessmentRecord, "audit_entry_id" | "audit_sequence">;
  mandate: {
    id: string;
    kind: string;
    mandate_type: string | null;
    vct: string | null;
    content_hash: string;
    mandate_hash: string;
    mandate: Record<string, unknown>;
  };
  events: { id: string; type: string; data: Record<string, unknown> }[];
}

export function recordOf(plan: PersistPlan, entry: StoredEntry): AssessmentRecord {
  return { ...plan.record, audit_entry_id: entry.id, audit_sequence: entry.sequence };
}

/**
 * One transaction, one round trip: the ledger entry, the mandate, the outbox events, the
 * assessment, and the agent's evidence counters (only when this transaction inserted the
 * assessment, so a replayed plan never counts twice). Every insert is idempotent. Answers the
 * id stored for this content, which differs from the plan's only when a concurrent request
 * with the same idempotency key and other content won.
 */
export async function persist(
  c: AppContext,
  orgId: string,
  plan: PersistPlan,
  entry: StoredEntry,
): Promise<string | null> {
  const record = recordOf(plan, entry);
  const { mandate } = plan;
  const row = {
    ...record,
    org_id: orgId,
    created_at: record.created,
    agent_id: record.agent?.id ?? null,
  };
  const results = await orgBatch(c, (db) => [
    db.insert(auditEntries).values(auditEntryRow(entry)).onConflictDoNothing(),
    db
      .insert(mandates)
      .values({
        id: mandate.id,
        assessmentId: record.id,
        kind: mandate.kind,
        mandateType: mandate.mandate_type,
        vct: mandate.vct,
        contentHash: mandate.content_hash,
        mandateHash: mandate.mandate_hash,
        mandate: mandate.mandate,
        livemode: record.livemode,
        createdAt: new Date(record.created),
      })
      .onConflictDoNothing(),
    db.insert(events).values(plan.events).onConflictDoNothing(),
    db.execute(sql`
      with ins as (
        insert into assessments
        select * from json_populate_record(null::assessments, ${JSON.stringify(row)}::json)
        on conflict do nothing
        returning agent_id, decision
      )
      update agents a set
        approvals = a.approvals + (ins.decision = 'approve')::int,
        reviews = a.reviews + (ins.decision = 'review')::int,
        denials = a.denials + (ins.decision = 'deny')::int,
        trust_reason = 'assessment'
      from ins where a.id = ins.agent_id`),
    db
      .select({ id: assessments.id })
      .from(assessments)
      .where(eq(assessments.contentHash, record.content_hash)),
  ]);
  return results[4][0]?.id ?? null;
}
