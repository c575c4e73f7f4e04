/** Agent sessions: hash-linked, optionally signed series of events an agent produced. */
import { sql } from "drizzle-orm";
import {
  bigint,
  boolean,
  check,
  foreignKey,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
  uuid,
} from "drizzle-orm/pg-core";
import { SESSION_EVENT_TYPES } from "../../schemas/vocabulary";
import { createdAtMs } from "./columns";
import { tenantOrg } from "./foundation";
import { agentKeys, agents } from "./identity";

/**
 * One session: named by its agent (`external_id`, unique per org, mode and agent), with the head
 * of its chain. The head only moves by a conditional UPDATE (head unchanged) in the transaction
 * that inserts the events, so two racing appends can never both land. `created_audit_*` name the
 * `session.created` entry, `audit_*` the latest entry that changed the session.
 */
export const sessions = pgTable(
  "sessions",
  {
    id: uuid("id").primaryKey(),
    orgId: tenantOrg(),
    livemode: boolean("livemode").notNull(),
    agentId: uuid("agent_id").notNull(),
    externalId: text("external_id").notNull(),
    requireSignatures: boolean("require_signatures").notNull(),
    metadata: jsonb("metadata").$type<Record<string, string>>().notNull().default({}),
    headSequence: integer("head_sequence").notNull(),
    /** Null while the session holds no event. */
    headHash: text("head_hash"),
    signedEvents: integer("signed_events").notNull(),
    createdAt: createdAtMs(),
    updatedAt: timestamp("updated_at", { withTimezone: true, precision: 3 }).notNull(),
    createdAuditEntryId: uuid("created_audit_entry_id").notNull(),
    createdAuditSequence: bigint("created_audit_sequence", { mode: "number" }).notNull(),
    auditEntryId: uuid("audit_entry_id").notNull(),
    auditSequence: bigint("audit_sequence", { mode: "number" }).notNull(),
  },
  (t) => [
    foreignKey({
      columns: [t.orgId, t.agentId],
      foreignColumns: [agents.orgId, agents.id],
      name: "sessions_agent_fk",
    }),
    uniqueIndex("sessions_org_id_idx").on(t.orgId, t.id),
    uniqueIndex("sessions_external_idx").on(t.orgId, t.livemode, t.agentId, t.externalId),
    index("sessions_list_idx").on(t.orgId, t.livemode, t.id),
    check("sessions_head_check", sql`${t.headSequence} >= 0 and ${t.headSequence} <= 10000`),
    check(
      "sessions_head_hash_check",
      sql`(${t.headSequence} = 0) = (${t.headHash} is null)
        and (${t.headHash} is null or ${t.headHash} ~ '^[0-9a-f]{64}$')`,
    ),
    check(
      "sessions_signed_check",
      sql`${t.signedEvents} >= 0 and ${t.signedEvents} <= ${t.headSequence}`,
    ),
    check("sessions_external_id_check", sql`char_length(${t.externalId}) between 1 and 200`),
  ],
);

/**
 * The events of a session, immutable once written. `hash` is the SHA-256 of the RFC 8785 form of
 * the chained event (src/agent-sessions/chain.ts), which every column here but the signature, its key,
 * the receipt time and the audit names goes into. `audit_*` name the ledger entry of the batch
 * that brought the event (`session.created` or `session.events_appended`).
 */
export const sessionEvents = pgTable(
  "session_events",
  {
    orgId: tenantOrg(),
    sessionId: uuid("session_id").notNull(),
    sequence: integer("sequence").notNull(),
    type: text("type", { enum: SESSION_EVENT_TYPES }).notNull(),
    time: timestamp("time", { withTimezone: true, precision: 3 }).notNull(),
    payloadDigest: text("payload_digest").notNull(),
    prevHash: text("prev_hash").notNull(),
    hash: text("hash").notNull(),
    assessmentId: uuid("assessment_id"),
    /** Detached compact JWS over the chained event; null when unsigned. */
    signature: text("signature"),
    /** The RFC 7638 thumbprint of the agent key that signed it. */
    keyId: text("key_id"),
    receivedAt: timestamp("received_at", { withTimezone: true, precision: 3 }).notNull(),
    auditEntryId: uuid("audit_entry_id").notNull(),
    auditSequence: bigint("audit_sequence", { mode: "number" }).notNull(),
    /**
     * Written by a rival: a request that sent a different batch at this position finished this
     * recorded batch before the batch's own request did. That request still answers 201 (the
     * rival answers 409), so it must tell a rival's write from a twin's (the same batch resent,
     * which answered 201 itself).
     */
    writtenByRival: boolean("written_by_rival").notNull().default(false),
  },
  (t) => [
    primaryKey({ columns: [t.orgId, t.sessionId, t.sequence] }),
    foreignKey({
      columns: [t.orgId, t.sessionId],
      foreignColumns: [sessions.orgId, sessions.id],
      name: "session_events_session_fk",
    }),
    foreignKey({
      columns: [t.orgId, t.keyId],
      foreignColumns: [agentKeys.orgId, agentKeys.thumbprint],
      name: "session_events_key_fk",
    }),
    index("session_events_assessment_idx").on(t.orgId, t.assessmentId),
    check("session_events_sequence_check", sql`${t.sequence} >= 1 and ${t.sequence} <= 10000`),
    check(
      "session_events_type_check",
      sql`${t.type} in ('message', 'tool_call', 'tool_result', 'action', 'observation', 'custom')`,
    ),
    check(
      "session_events_hashes_check",
      sql`${t.hash} ~ '^[0-9a-f]{64}$' and ${t.prevHash} ~ '^[0-9a-f]{64}$'
        and ${t.payloadDigest} ~ '^sha256:[0-9a-f]{64}$'`,
    ),
    check("session_events_signature_check", sql`(${t.signature} is null) = (${t.keyId} is null)`),
  ],
);
