/** Action authority: bounded mandates, decisions with grants, redemptions. */
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
import type { Reason } from "../../action/reasons";
import { ACTION_DECISIONS, MANDATE_STATUSES } from "../../schemas/vocabulary";
import { createdAtMs, statusPlace, statusPlaceCheck } from "./columns";
import { tenantOrg } from "./foundation";
import { agents, principals } from "./identity";

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
    orgId: tenantOrg(),
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
    createdAt: createdAtMs(),
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
    orgId: tenantOrg(),
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
    /** The grant's place (null without a grant, and on grants signed before places existed). */
    ...statusPlace(),
    createdAt: createdAtMs(),
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
    statusPlaceCheck("action_decisions_status_place_check", t),
    check(
      "action_decisions_place_grant_check",
      sql`${t.statusList} is null or ${t.grantId} is not null`,
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
    orgId: tenantOrg(),
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
