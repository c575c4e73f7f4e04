import { sql } from "drizzle-orm";
import {
  bigint,
  check,
  index,
  jsonb,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
  uuid,
} from "drizzle-orm/pg-core";

/**
 * Org-scoped rows default their `org_id` to the tenant set for the transaction, so route code
 * never passes it and cannot pass the wrong one; RLS `WITH CHECK` rejects anything else.
 */
const currentOrg = sql`nullif(current_setting('app.org_id', true), '')::uuid`;

const createdAt = () => timestamp("created_at", { withTimezone: true }).notNull().defaultNow();

export const users = pgTable("users", {
  id: uuid("id").primaryKey(),
  /** The identity provider's `sub`: the only link between a session and a user. */
  idpSubject: text("idp_subject").notNull().unique(),
  email: text("email"),
  createdAt: createdAt(),
});

export const organizations = pgTable("organizations", {
  id: uuid("id").primaryKey(),
  name: text("name").notNull(),
  /** One org per founding user makes `POST /v1/orgs` idempotent even when two calls race. */
  founderUserId: uuid("founder_user_id")
    .notNull()
    .unique()
    .references(() => users.id),
  createdAt: createdAt(),
});

export const memberships = pgTable(
  "memberships",
  {
    orgId: uuid("org_id")
      .notNull()
      .default(currentOrg)
      .references(() => organizations.id),
    userId: uuid("user_id")
      .notNull()
      .references(() => users.id),
    role: text("role", { enum: ["owner", "admin", "member"] }).notNull(),
    createdAt: createdAt(),
  },
  (t) => [
    primaryKey({ columns: [t.orgId, t.userId] }),
    index("memberships_user_idx").on(t.userId),
    check("memberships_role_check", sql`${t.role} in ('owner', 'admin', 'member')`),
  ],
);

export const apiKeys = pgTable(
  "api_keys",
  {
    id: uuid("id").primaryKey(),
    orgId: uuid("org_id")
      .notNull()
      .default(currentOrg)
      .references(() => organizations.id),
    name: text("name").notNull(),
    /** Hex SHA-256 of the whole key; the plaintext is never stored. */
    keyHash: text("key_hash").notNull(),
    /** The non-secret head of the key (`aar_live_AbCd`), so people can tell keys apart. */
    prefix: text("prefix").notNull(),
    mode: text("mode", { enum: ["live", "test"] }).notNull(),
    scopes: text("scopes").array().notNull(),
    createdByUserId: uuid("created_by_user_id").references(() => users.id),
    createdAt: createdAt(),
    revokedAt: timestamp("revoked_at", { withTimezone: true }),
  },
  (t) => [
    uniqueIndex("api_keys_key_hash_idx").on(t.keyHash),
    index("api_keys_org_idx").on(t.orgId, t.id),
    check("api_keys_mode_check", sql`${t.mode} in ('live', 'test')`),
  ],
);

/**
 * The queryable copy of each org's ledger. The OrgLedger Durable Object assigns sequences and
 * hashes and is the only writer; the application role may read and insert, never change.
 */
export const auditEntries = pgTable(
  "audit_entries",
  {
    orgId: uuid("org_id")
      .notNull()
      .default(currentOrg)
      .references(() => organizations.id),
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
    orgId: uuid("org_id")
      .notNull()
      .default(currentOrg)
      .references(() => organizations.id),
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
    orgId: uuid("org_id")
      .notNull()
      .default(currentOrg)
      .references(() => organizations.id),
    type: text("type").notNull(),
    data: jsonb("data").notNull(),
    /** Makes a repeated detection (the same integrity break seen twice) one event, not many. */
    dedupeKey: text("dedupe_key"),
    createdAt: createdAt(),
  },
  (t) => [
    uniqueIndex("events_dedupe_idx").on(t.orgId, t.dedupeKey),
    index("events_org_idx").on(t.orgId, t.id),
  ],
);
