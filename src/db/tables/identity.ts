/** Principals, agents, their trust timeline and their public keys. */
import { sql } from "drizzle-orm";
import {
  bigint,
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
import { AGENT_STATUSES, CARD_STATUSES, RISK_TIERS } from "../../schemas/vocabulary";
import { createdAt, createdAtMs, oneOf, statusPlace, statusPlaceCheck } from "./columns";
import { tenantOrg } from "./foundation";

/**
 * The people and companies agents act for. Personal data lives only in `ciphertext`, sealed
 * with a data key of this principal's own (src/identity/personal-data.ts); erasure destroys
 * `wrapped_key`, after which nobody can open the ciphertext.
 */
export const PRINCIPAL_TYPES = ["individual", "company"] as const;
export const PRINCIPAL_STATUSES = ["active", "erased"] as const;

export const principals = pgTable(
  "principals",
  {
    id: uuid("id").primaryKey(),
    orgId: tenantOrg(),
    type: text("type", { enum: PRINCIPAL_TYPES }).notNull(),
    status: text("status", { enum: PRINCIPAL_STATUSES }).notNull().default("active"),
    wrappedKey: text("wrapped_key"),
    ciphertext: text("ciphertext"),
    /** Caller-supplied non-personal labels; cleared on erasure all the same. */
    metadata: jsonb("metadata").$type<Record<string, string>>().notNull().default({}),
    createdAt: createdAt(),
    erasedAt: timestamp("erased_at", { withTimezone: true }),
  },
  (t) => [
    uniqueIndex("principals_org_id_idx").on(t.orgId, t.id),
    oneOf("principals_type_check", t.type, PRINCIPAL_TYPES),
    oneOf("principals_status_check", t.status, PRINCIPAL_STATUSES),
    // Erased means the key is gone: the database itself refuses an erased row that keeps one.
    check("principals_erased_check", sql`(${t.status} = 'erased') = (${t.wrappedKey} is null)`),
  ],
);

/**
 * Agents and the evidence their trust is computed from. `trust_score` and `risk_tier` are
 * derived by the database (trigger `agents_trust` in drizzle/0000_baseline.sql) from the
 * evidence columns, so every path that changes evidence gets the same, atomic answer.
 */
export const agents = pgTable(
  "agents",
  {
    id: uuid("id").primaryKey(),
    orgId: tenantOrg(),
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
    /** Live assessments of the agent labeled `fraud` or `chargeback`, each counted once. */
    confirmedFrauds: integer("confirmed_frauds").notNull().default(0),
    /** Live assessments decided `review` and later labeled `legitimate`, each counted once. */
    confirmedLegitimate: integer("confirmed_legitimate").notNull().default(0),
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
    ...statusPlace(),
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
    // The assessments search finds agents by name prefix, case-insensitive (LIKE 'x%').
    index("agents_name_idx").on(t.orgId, sql`lower(${t.name}) text_pattern_ops`),
    oneOf("agents_status_check", t.status, AGENT_STATUSES),
    oneOf("agents_risk_tier_check", t.riskTier, RISK_TIERS),
    oneOf("agents_card_status_check", t.cardStatus, CARD_STATUSES),
    statusPlaceCheck("agents_status_place_check", t),
  ],
);

/** The timeline of an agent's trust: one row per change of score, tier or status. */
export const agentTrustHistory = pgTable(
  "agent_trust_history",
  {
    id: uuid("id").primaryKey(),
    orgId: tenantOrg(),
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

export const KEY_STATUSES = ["active", "revoked"] as const;

/** Agents' public keys, identified by their RFC 7638 thumbprint (unique within an org). */
export const agentKeys = pgTable(
  "agent_keys",
  {
    orgId: tenantOrg(),
    thumbprint: text("thumbprint").notNull(),
    agentId: uuid("agent_id").notNull(),
    jwk: jsonb("jwk").$type<Record<string, string>>().notNull(),
    kty: text("kty").notNull(),
    crv: text("crv"),
    alg: text("alg").notNull(),
    status: text("status", { enum: KEY_STATUSES }).notNull().default("active"),
    createdAt: createdAtMs().defaultNow(),
    revokedAt: timestamp("revoked_at", { withTimezone: true }),
    ...statusPlace(),
  },
  (t) => [
    primaryKey({ columns: [t.orgId, t.thumbprint] }),
    foreignKey({
      columns: [t.orgId, t.agentId],
      foreignColumns: [agents.orgId, agents.id],
      name: "agent_keys_agent_fk",
    }),
    index("agent_keys_agent_idx").on(t.orgId, t.agentId, t.createdAt),
    oneOf("agent_keys_status_check", t.status, KEY_STATUSES),
    statusPlaceCheck("agent_keys_status_place_check", t),
  ],
);
