/** The review queue: one item per `review` assessment, and each org's review settings. */
import { sql } from "drizzle-orm";
import {
  boolean,
  check,
  index,
  integer,
  jsonb,
  pgTable,
  text,
  timestamp,
  uniqueIndex,
  uuid,
} from "drizzle-orm/pg-core";
import { createdAtMs, currentOrg } from "./columns";
import { organizations, tenantOrg } from "./foundation";

/**
 * A review item, opened in the transaction that stores its `review` assessment (the ledger
 * object's group commit) and closed once: resolved by a person or a key, or expired by the
 * Cron sweep past the org's SLA. The closing columns are written together, by the one writer
 * the ledger object let sequence `review.resolved` for this item.
 */
export const reviews = pgTable(
  "reviews",
  {
    id: uuid("id").primaryKey(),
    orgId: tenantOrg(),
    assessmentId: uuid("assessment_id").notNull(),
    livemode: boolean("livemode").notNull(),
    agentId: uuid("agent_id"),
    createdAt: createdAtMs(),
    /** `created_at` plus the org's SLA when it opened; a later SLA change does not move it. */
    expiresAt: timestamp("expires_at", { withTimezone: true, precision: 3 }).notNull(),
    status: text("status", { enum: ["open", "resolved", "expired"] })
      .notNull()
      .default("open"),
    /**
     * What approving spends under an AP2 credential (root, transaction, amount, budgets), for
     * the ledger object's single-use and budget check; null without a verified credential.
     */
    spend: jsonb("spend"),
    /**
     * What approving re-checks under a verified AP2 credential (issuer and root key, holder key,
     * standing, time window: `ReviewRecheck`); null without one, and on items opened before it
     * was kept, which cannot be approved (docs/reviews.md, "Re-checked on approval").
     */
    recheck: jsonb("recheck"),
    decision: text("decision", { enum: ["approve", "deny"] }),
    reason: text("reason"),
    note: text("note"),
    resolvedAt: timestamp("resolved_at", { withTimezone: true, precision: 3 }),
    /** `{type, id}` of who resolved it: a user, an API key, or the SLA sweep (`system`). */
    resolvedBy: jsonb("resolved_by"),
    /** The resolved Risk Payload (compact JWS) and its key id. */
    jws: text("jws"),
    kid: text("kid"),
    auditEntryId: uuid("audit_entry_id"),
  },
  (t) => [
    uniqueIndex("reviews_assessment_idx").on(t.orgId, t.assessmentId),
    index("reviews_org_idx").on(t.orgId, t.livemode, t.id),
    index("reviews_due_idx").on(t.expiresAt).where(sql`${t.status} = 'open'`),
    check("reviews_status_check", sql`${t.status} in ('open', 'resolved', 'expired')`),
    check(
      "reviews_closed_check",
      sql`(${t.status} = 'open') = (${t.decision} is null and ${t.resolvedAt} is null)`,
    ),
  ],
);

/** Per-org review settings; an org without a row has the defaults (docs/reviews.md). */
export const reviewSettings = pgTable(
  "review_settings",
  {
    orgId: uuid("org_id")
      .primaryKey()
      .default(currentOrg)
      .references(() => organizations.id),
    slaSeconds: integer("sla_seconds").notNull(),
    updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [check("review_settings_sla_check", sql`${t.slaSeconds} between 60 and 2592000`)],
);
