/** Control coverage: the side effects observers report, matched later against gate proof. */
import { sql } from "drizzle-orm";
import {
  bigint,
  boolean,
  check,
  index,
  jsonb,
  pgTable,
  text,
  timestamp,
  uniqueIndex,
  uuid,
} from "drizzle-orm/pg-core";
import { createdAtMs } from "./columns";
import { tenantOrg } from "./foundation";

export const GATE_TYPES = ["assessment", "grant", "decision"] as const;

/**
 * One side effect an executor or observer says happened (a payment executed, a message sent),
 * immutable once written. The gate it names is kept as reported, with no foreign key: a gate
 * that does not exist is evidence too (`gate_not_found`). `gate_claim` is the gate resolved
 * when the effect was reported (a decision's grant), so two effects claiming one single-use
 * gate are found by one index (across modes: a grant has none). Unique per org, mode and observer by the rail's own reference:
 * that is the idempotency key of the report. `audit_*` name the `control_effect.observed` entry.
 */
export const controlEffects = pgTable(
  "control_effects",
  {
    id: uuid("id").primaryKey(),
    orgId: tenantOrg(),
    livemode: boolean("livemode").notNull(),
    effect: text("effect").notNull(),
    observer: text("observer").notNull(),
    reference: text("reference").notNull(),
    occurredAt: timestamp("occurred_at", { withTimezone: true, precision: 3 }).notNull(),
    action: text("action"),
    resource: text("resource"),
    amount: bigint("amount", { mode: "number" }),
    currency: text("currency"),
    gateType: text("gate_type", { enum: GATE_TYPES }),
    gateId: uuid("gate_id"),
    gateClaim: text("gate_claim"),
    metadata: jsonb("metadata").$type<Record<string, string>>().notNull().default({}),
    /** Who reported it: the caller's actor (an API key or a user). */
    reportedByType: text("reported_by_type", { enum: ["api_key", "user"] }).notNull(),
    reportedById: text("reported_by_id").notNull(),
    createdAt: createdAtMs(),
    auditEntryId: uuid("audit_entry_id").notNull(),
    auditSequence: bigint("audit_sequence", { mode: "number" }).notNull(),
  },
  (t) => [
    uniqueIndex("control_effects_org_id_idx").on(t.orgId, t.id),
    uniqueIndex("control_effects_reference_idx").on(t.orgId, t.livemode, t.observer, t.reference),
    index("control_effects_occurred_idx").on(t.orgId, t.livemode, t.occurredAt, t.id),
    // Single use of a grant holds across the org's modes: the first claimant is found by claim.
    index("control_effects_org_claim_idx").on(t.orgId, t.gateClaim, t.occurredAt, t.id),
    check(
      "control_effects_gate_check",
      sql`(${t.gateType} is null and ${t.gateId} is null and ${t.gateClaim} is null)
        or (${t.gateType} in ('assessment', 'grant', 'decision') and ${t.gateId} is not null
            and ${t.gateClaim} is not null)`,
    ),
    check("control_effects_reported_by_check", sql`${t.reportedByType} in ('api_key', 'user')`),
    check(
      "control_effects_amount_check",
      sql`(${t.amount} is null) = (${t.currency} is null) and (${t.amount} is null or ${t.amount} >= 0)`,
    ),
  ],
);
