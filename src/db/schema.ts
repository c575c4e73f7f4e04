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
import type { Reason } from "../action/checks";

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

/**
 * The people and companies agents act for. Personal data lives only in `ciphertext`, sealed
 * with a data key of this principal's own (src/identity/personal-data.ts); erasure destroys
 * `wrapped_key`, after which nobody can open the ciphertext.
 */
export const principals = pgTable(
  "principals",
  {
    id: uuid("id").primaryKey(),
    orgId: uuid("org_id")
      .notNull()
      .default(currentOrg)
      .references(() => organizations.id),
    type: text("type", { enum: ["individual", "company"] }).notNull(),
    status: text("status", { enum: ["active", "erased"] })
      .notNull()
      .default("active"),
    wrappedKey: text("wrapped_key"),
    ciphertext: text("ciphertext"),
    /** Caller-supplied non-personal labels; cleared on erasure all the same. */
    metadata: jsonb("metadata").$type<Record<string, string>>().notNull().default({}),
    createdAt: createdAt(),
    erasedAt: timestamp("erased_at", { withTimezone: true }),
  },
  (t) => [
    uniqueIndex("principals_org_id_idx").on(t.orgId, t.id),
    check("principals_type_check", sql`${t.type} in ('individual', 'company')`),
    check("principals_status_check", sql`${t.status} in ('active', 'erased')`),
    // Erased means the key is gone: the database itself refuses an erased row that keeps one.
    check("principals_erased_check", sql`(${t.status} = 'erased') = (${t.wrappedKey} is null)`),
  ],
);

export const AGENT_STATUSES = ["active", "suspended", "revoked"] as const;
export const RISK_TIERS = ["low", "medium", "high", "critical"] as const;
export const CARD_STATUSES = ["unverified", "verified", "invalid"] as const;

/**
 * Agents and the evidence their trust is computed from. `trust_score` and `risk_tier` are
 * derived by the database (trigger `agents_trust`, migration 0005) from the evidence columns,
 * so every path that changes evidence gets the same, atomic answer.
 */
export const agents = pgTable(
  "agents",
  {
    id: uuid("id").primaryKey(),
    orgId: uuid("org_id")
      .notNull()
      .default(currentOrg)
      .references(() => organizations.id),
    principalId: uuid("principal_id").notNull(),
    name: text("name").notNull(),
    description: text("description"),
    metadata: jsonb("metadata").$type<Record<string, string>>().notNull().default({}),
    status: text("status", { enum: AGENT_STATUSES }).notNull().default("active"),
    trustScore: integer("trust_score").notNull().default(0),
    riskTier: text("risk_tier", { enum: RISK_TIERS }).notNull().default("critical"),
    /** Why the evidence last changed; the trigger copies it into the trust history. */
    trustReason: text("trust_reason").notNull(),
    // Evidence.
    activeKeys: integer("active_keys").notNull().default(0),
    approvals: integer("approvals").notNull().default(0),
    reviews: integer("reviews").notNull().default(0),
    denials: integer("denials").notNull().default(0),
    suspensions: integer("suspensions").notNull().default(0),
    // The latest A2A Agent Card check; a verified card is bound by its digest.
    cardStatus: text("card_status", { enum: CARD_STATUSES }).notNull().default("unverified"),
    cardReasons: jsonb("card_reasons").notNull().default([]),
    cardSignatures: jsonb("card_signatures").notNull().default([]),
    cardDigest: text("card_digest"),
    cardVersion: text("card_version"),
    cardName: text("card_name"),
    cardUrl: text("card_url"),
    cardSourceUrl: text("card_source_url"),
    cardCheckedAt: timestamp("card_checked_at", { withTimezone: true }),
    cardVerifiedAt: timestamp("card_verified_at", { withTimezone: true }),
    createdAt: createdAt(),
    updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
    suspendedAt: timestamp("suspended_at", { withTimezone: true }),
    revokedAt: timestamp("revoked_at", { withTimezone: true }),
  },
  (t) => [
    // Same-org reference: an agent can only represent a principal of its own organization.
    foreignKey({
      columns: [t.orgId, t.principalId],
      foreignColumns: [principals.orgId, principals.id],
      name: "agents_principal_fk",
    }),
    uniqueIndex("agents_org_id_idx").on(t.orgId, t.id),
    index("agents_principal_idx").on(t.orgId, t.principalId, t.id),
    index("agents_card_digest_idx").on(t.orgId, t.cardDigest),
    check("agents_status_check", sql`${t.status} in ('active', 'suspended', 'revoked')`),
    check("agents_risk_tier_check", sql`${t.riskTier} in ('low', 'medium', 'high', 'critical')`),
    check(
      "agents_card_status_check",
      sql`${t.cardStatus} in ('unverified', 'verified', 'invalid')`,
    ),
  ],
);

/** The timeline of an agent's trust: one row per change of score, tier or status. */
export const agentTrustHistory = pgTable(
  "agent_trust_history",
  {
    id: uuid("id").primaryKey(),
    orgId: uuid("org_id")
      .notNull()
      .default(currentOrg)
      .references(() => organizations.id),
    /**
     * The agent's own event counter (1, 2, …, set by the trigger under the agent's row lock):
     * orders the timeline exactly, and as a cursor reveals nothing about other agents.
     */
    seq: bigint("seq", { mode: "number" }).notNull(),
    agentId: uuid("agent_id").notNull(),
    reason: text("reason").notNull(),
    status: text("status").notNull(),
    trustScore: integer("trust_score").notNull(),
    riskTier: text("risk_tier").notNull(),
    previousScore: integer("previous_score"),
    previousTier: text("previous_tier"),
    createdAt: createdAt(),
  },
  (t) => [
    foreignKey({
      columns: [t.orgId, t.agentId],
      foreignColumns: [agents.orgId, agents.id],
      name: "agent_trust_history_agent_fk",
    }),
    index("agent_trust_history_agent_idx").on(t.orgId, t.agentId, t.seq),
  ],
);

/** Agents' public keys, identified by their RFC 7638 thumbprint (unique within an org). */
export const agentKeys = pgTable(
  "agent_keys",
  {
    orgId: uuid("org_id")
      .notNull()
      .default(currentOrg)
      .references(() => organizations.id),
    thumbprint: text("thumbprint").notNull(),
    agentId: uuid("agent_id").notNull(),
    jwk: jsonb("jwk").$type<Record<string, string>>().notNull(),
    kty: text("kty").notNull(),
    crv: text("crv"),
    alg: text("alg").notNull(),
    status: text("status", { enum: ["active", "revoked"] })
      .notNull()
      .default("active"),
    /** Millisecond precision: the list's keyset cursor carries it exactly. */
    createdAt: timestamp("created_at", { withTimezone: true, precision: 3 }).notNull().defaultNow(),
    revokedAt: timestamp("revoked_at", { withTimezone: true }),
  },
  (t) => [
    primaryKey({ columns: [t.orgId, t.thumbprint] }),
    foreignKey({
      columns: [t.orgId, t.agentId],
      foreignColumns: [agents.orgId, agents.id],
      name: "agent_keys_agent_fk",
    }),
    index("agent_keys_agent_idx").on(t.orgId, t.agentId, t.createdAt),
    check("agent_keys_status_check", sql`${t.status} in ('active', 'revoked')`),
  ],
);

/**
 * Policies: drafts, and at most one active per org (a partial unique index). `version` is
 * assigned at each activation from an org-wide sequence, so it only ever grows.
 */
export const policies = pgTable(
  "policies",
  {
    id: uuid("id").primaryKey(),
    orgId: uuid("org_id")
      .notNull()
      .default(currentOrg)
      .references(() => organizations.id),
    name: text("name").notNull(),
    rules: jsonb("rules").notNull(),
    /** `rules.velocity.window` in seconds, so the assess context query can use it directly. */
    velocityWindowSeconds: integer("velocity_window_seconds"),
    status: text("status", { enum: ["draft", "active"] })
      .notNull()
      .default("draft"),
    version: integer("version"),
    createdAt: createdAt(),
    activatedAt: timestamp("activated_at", { withTimezone: true }),
  },
  (t) => [
    uniqueIndex("policies_one_active_idx").on(t.orgId).where(sql`${t.status} = 'active'`),
    uniqueIndex("policies_version_idx").on(t.orgId, t.version),
    index("policies_org_idx").on(t.orgId, t.id),
    check("policies_status_check", sql`${t.status} in ('draft', 'active')`),
  ],
);

/**
 * One row per assessment: everything the Outcome is rebuilt from, plus the columns history
 * queries need (agent, amount, payee). Unique per org by the mandate's content hash: that is
 * the idempotency key of `POST /v1/assess`.
 */
export const assessments = pgTable(
  "assessments",
  {
    id: uuid("id").primaryKey(),
    orgId: uuid("org_id")
      .notNull()
      .default(currentOrg)
      .references(() => organizations.id),
    createdAt: timestamp("created_at", { withTimezone: true, precision: 3 }).notNull(),
    livemode: boolean("livemode").notNull(),
    kind: text("kind").notNull(),
    mandateType: text("mandate_type"),
    mandateId: uuid("mandate_id").notNull(),
    contentHash: text("content_hash").notNull(),
    idempotencyKey: text("idempotency_key"),
    agentId: uuid("agent_id"),
    agent: jsonb("agent"),
    decision: text("decision", { enum: ["approve", "review", "deny"] }).notNull(),
    riskLevel: text("risk_level", { enum: ["normal", "elevated", "highest"] }).notNull(),
    riskScore: integer("risk_score").notNull(),
    reason: text("reason").notNull(),
    policyVersion: integer("policy_version").notNull(),
    confidences: jsonb("confidences").notNull(),
    signals: jsonb("signals").notNull(),
    rejectionReasons: jsonb("rejection_reasons").notNull(),
    jws: text("jws").notNull(),
    kid: text("kid").notNull(),
    verifyUrl: text("verify_url").notNull(),
    auditEntryId: uuid("audit_entry_id").notNull(),
    auditSequence: bigint("audit_sequence", { mode: "number" }).notNull(),
    a2a: jsonb("a2a"),
    latencyMs: integer("latency_ms").notNull(),
    amount: bigint("amount", { mode: "number" }),
    currency: text("currency"),
    counterparty: text("counterparty"),
  },
  (t) => [
    uniqueIndex("assessments_content_idx").on(t.orgId, t.contentHash),
    uniqueIndex("assessments_idempotency_idx").on(t.orgId, t.livemode, t.idempotencyKey),
    index("assessments_org_idx").on(t.orgId, t.id),
    index("assessments_agent_idx").on(t.orgId, t.agentId, t.createdAt),
    index("assessments_counterparty_idx").on(t.orgId, t.agentId, t.counterparty),
    check("assessments_decision_check", sql`${t.decision} in ('approve', 'review', 'deny')`),
  ],
);

/** The assessed mandates, as submitted (without the service's injected risk payload). */
export const mandates = pgTable(
  "mandates",
  {
    id: uuid("id").primaryKey(),
    orgId: uuid("org_id")
      .notNull()
      .default(currentOrg)
      .references(() => organizations.id),
    assessmentId: uuid("assessment_id").notNull(),
    kind: text("kind").notNull(),
    mandateType: text("mandate_type"),
    vct: text("vct"),
    contentHash: text("content_hash").notNull(),
    /** `sha256:<hex>` of the RFC 8785 mandate; the Risk Payload binds it. */
    mandateHash: text("mandate_hash").notNull(),
    mandate: jsonb("mandate").notNull(),
    livemode: boolean("livemode").notNull(),
    createdAt: timestamp("created_at", { withTimezone: true, precision: 3 }).notNull(),
  },
  (t) => [
    uniqueIndex("mandates_content_idx").on(t.orgId, t.contentHash),
    index("mandates_org_idx").on(t.orgId, t.id),
  ],
);

export const MANDATE_STATUSES = ["active", "revoked"] as const;
export const ACTION_DECISIONS = ["ALLOW", "DENY"] as const;

/**
 * Bounded authority for one agent: an action, a resource (exact or a `*`-terminated prefix), a
 * time window and limits. `uses` and `amount_used` only grow, by a conditional UPDATE that
 * reserves them for an ALLOW; the checks make the database refuse going past a limit even if
 * the code tried. `audit_*` name the `action_mandate.created` entry.
 */
export const actionMandates = pgTable(
  "action_mandates",
  {
    id: uuid("id").primaryKey(),
    orgId: uuid("org_id")
      .notNull()
      .default(currentOrg)
      .references(() => organizations.id),
    agentId: uuid("agent_id").notNull(),
    principalId: uuid("principal_id"),
    action: text("action").notNull(),
    resource: text("resource").notNull(),
    notBefore: timestamp("not_before", { withTimezone: true, precision: 3 }).notNull(),
    expiresAt: timestamp("expires_at", { withTimezone: true, precision: 3 }).notNull(),
    currency: text("currency"),
    maxAmountPerUse: bigint("max_amount_per_use", { mode: "number" }),
    maxAmountTotal: bigint("max_amount_total", { mode: "number" }),
    maxUses: integer("max_uses"),
    uses: integer("uses").notNull().default(0),
    amountUsed: bigint("amount_used", { mode: "number" }).notNull().default(0),
    status: text("status", { enum: MANDATE_STATUSES }).notNull().default("active"),
    metadata: jsonb("metadata").$type<Record<string, string>>().notNull().default({}),
    createdAt: timestamp("created_at", { withTimezone: true, precision: 3 }).notNull(),
    revokedAt: timestamp("revoked_at", { withTimezone: true, precision: 3 }),
    auditEntryId: uuid("audit_entry_id").notNull(),
    auditSequence: bigint("audit_sequence", { mode: "number" }).notNull(),
  },
  (t) => [
    foreignKey({
      columns: [t.orgId, t.agentId],
      foreignColumns: [agents.orgId, agents.id],
      name: "action_mandates_agent_fk",
    }),
    foreignKey({
      columns: [t.orgId, t.principalId],
      foreignColumns: [principals.orgId, principals.id],
      name: "action_mandates_principal_fk",
    }),
    uniqueIndex("action_mandates_org_id_idx").on(t.orgId, t.id),
    index("action_mandates_agent_idx").on(t.orgId, t.agentId, t.id),
    check("action_mandates_status_check", sql`${t.status} in ('active', 'revoked')`),
    check("action_mandates_window_check", sql`${t.expiresAt} > ${t.notBefore}`),
    check(
      "action_mandates_uses_check",
      sql`${t.uses} >= 0 and (${t.maxUses} is null or ${t.uses} <= ${t.maxUses})`,
    ),
    check(
      "action_mandates_amount_check",
      sql`${t.amountUsed} >= 0 and (${t.maxAmountTotal} is null or ${t.amountUsed} <= ${t.maxAmountTotal})`,
    ),
    check(
      "action_mandates_revoked_check",
      sql`(${t.status} = 'revoked') = (${t.revokedAt} is not null)`,
    ),
  ],
);

/**
 * One answer to "may this agent do this, now?": immutable once written. An ALLOW may carry a
 * single-use grant (a compact JWS); `audit_*` name the `action_decision.created` entry, whose
 * payload is rebuilt from this row (src/action/records.ts).
 */
export const actionDecisions = pgTable(
  "action_decisions",
  {
    id: uuid("id").primaryKey(),
    orgId: uuid("org_id")
      .notNull()
      .default(currentOrg)
      .references(() => organizations.id),
    mandateId: uuid("mandate_id").notNull(),
    decision: text("decision", { enum: ACTION_DECISIONS }).notNull(),
    reasons: jsonb("reasons").$type<Reason[]>().notNull(),
    /** The agent as it stood when the decision was made. */
    agent: jsonb("agent")
      .$type<{ id: string; status: string; trust_score: number; risk_tier: string }>()
      .notNull(),
    action: text("action").notNull(),
    resource: text("resource").notNull(),
    amount: bigint("amount", { mode: "number" }),
    currency: text("currency"),
    audience: text("audience"),
    grantId: uuid("grant_id"),
    grantJws: text("grant_jws"),
    grantExpiresAt: timestamp("grant_expires_at", { withTimezone: true, precision: 3 }),
    createdAt: timestamp("created_at", { withTimezone: true, precision: 3 }).notNull(),
    auditEntryId: uuid("audit_entry_id").notNull(),
    auditSequence: bigint("audit_sequence", { mode: "number" }).notNull(),
  },
  (t) => [
    foreignKey({
      columns: [t.orgId, t.mandateId],
      foreignColumns: [actionMandates.orgId, actionMandates.id],
      name: "action_decisions_mandate_fk",
    }),
    uniqueIndex("action_decisions_org_id_idx").on(t.orgId, t.id),
    uniqueIndex("action_decisions_grant_idx").on(t.orgId, t.grantId),
    index("action_decisions_mandate_idx").on(t.orgId, t.mandateId, t.id),
    check("action_decisions_decision_check", sql`${t.decision} in ('ALLOW', 'DENY')`),
    // Only an ALLOW carries a grant, and a grant is all three columns or none.
    check(
      "action_decisions_grant_check",
      sql`(${t.grantId} is null and ${t.grantJws} is null and ${t.grantExpiresAt} is null)
        or (${t.decision} = 'ALLOW' and ${t.grantId} is not null and ${t.grantJws} is not null
            and ${t.grantExpiresAt} is not null and ${t.audience} is not null)`,
    ),
  ],
);

/**
 * The one redemption of a grant: the primary key is the grant, so the database holds the
 * single-use rule too (the org's ledger object decides which redemption is the one).
 */
export const actionRedemptions = pgTable(
  "action_redemptions",
  {
    orgId: uuid("org_id")
      .notNull()
      .default(currentOrg)
      .references(() => organizations.id),
    grantId: uuid("grant_id").notNull(),
    decisionId: uuid("decision_id").notNull(),
    mandateId: uuid("mandate_id").notNull(),
    /** Who redeemed: the API key (or the user of a session) that called. */
    executorType: text("executor_type").notNull(),
    executorId: text("executor_id").notNull(),
    action: text("action").notNull(),
    resource: text("resource").notNull(),
    amount: bigint("amount", { mode: "number" }),
    currency: text("currency"),
    redeemedAt: timestamp("redeemed_at", { withTimezone: true, precision: 3 }).notNull(),
    receiptJws: text("receipt_jws").notNull(),
    auditEntryId: uuid("audit_entry_id").notNull(),
    auditSequence: bigint("audit_sequence", { mode: "number" }).notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.orgId, t.grantId] }),
    foreignKey({
      columns: [t.orgId, t.grantId],
      foreignColumns: [actionDecisions.orgId, actionDecisions.grantId],
      name: "action_redemptions_grant_fk",
    }),
    foreignKey({
      columns: [t.orgId, t.decisionId],
      foreignColumns: [actionDecisions.orgId, actionDecisions.id],
      name: "action_redemptions_decision_fk",
    }),
    uniqueIndex("action_redemptions_decision_idx").on(t.orgId, t.decisionId),
  ],
);
