import {
  bigint,
  boolean,
  index,
  jsonb,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
  uuid,
} from "drizzle-orm/pg-core";
import { createdAt } from "./columns";
import { tenantOrg } from "./foundation";

/**
 * The queryable copy of each org's ledger. The OrgLedger Durable Object assigns sequences and
 * hashes and is the only writer; the application role may read and insert, never change.
 */
export const auditEntries = pgTable(
  "audit_entries",
  {
    orgId: tenantOrg(),
    sequence: bigint("sequence", { mode: "number" }).notNull(),
    id: uuid("id").notNull(),
    type: text("type").notNull(),
    actorType: text("actor_type").notNull(),
    actorId: text("actor_id").notNull(),
    subjectType: text("subject_type"),
    subjectId: text("subject_id"),
    digest: text("digest").notNull(),
    time: timestamp("time", { withTimezone: true, precision: 3 }).notNull(),
    prevHash: text("prev_hash").notNull(),
    hash: text("hash").notNull(),
    /** RFC 6962 leaf hash: lets the public transparency endpoints find a proof by it alone. */
    leafHash: text("leaf_hash").notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.orgId, t.sequence] }),
    uniqueIndex("audit_entries_id_idx").on(t.id),
    uniqueIndex("audit_entries_leaf_hash_idx").on(t.leafHash),
    index("audit_entries_type_idx").on(t.orgId, t.type, t.sequence),
    index("audit_entries_time_idx").on(t.orgId, t.time),
  ],
);

/** Signed Merkle tree heads over an org's ledger; kept forever, each consistent with the last. */
export const auditCheckpoints = pgTable(
  "audit_checkpoints",
  {
    orgId: tenantOrg(),
    logId: text("log_id").notNull(),
    treeSize: bigint("tree_size", { mode: "number" }).notNull(),
    rootHash: text("root_hash").notNull(),
    time: timestamp("time", { withTimezone: true, precision: 3 }).notNull(),
    note: text("note").notNull(),
    jws: text("jws").notNull(),
    previousTreeSize: bigint("previous_tree_size", { mode: "number" }).notNull(),
    consistencyProof: text("consistency_proof").array().notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.orgId, t.treeSize] }),
    index("audit_checkpoints_log_idx").on(t.logId, t.treeSize),
  ],
);

/** The outbox: events written with the change that caused them, delivered as webhooks. */
export const events = pgTable(
  "events",
  {
    id: uuid("id").primaryKey(),
    orgId: tenantOrg(),
    type: text("type").notNull(),
    data: jsonb("data").notNull(),
    /** Test-mode assessments make test events, delivered to test endpoints only. */
    livemode: boolean("livemode").notNull().default(true),
    /** Makes a repeated detection (the same integrity break seen twice) one event, not many. */
    dedupeKey: text("dedupe_key"),
    createdAt: createdAt(),
  },
  (t) => [
    uniqueIndex("events_dedupe_idx").on(t.orgId, t.dedupeKey),
    // Unique so deliveries can reference (org_id, id): an event of their own org only.
    uniqueIndex("events_org_id_idx").on(t.orgId, t.id),
  ],
);
