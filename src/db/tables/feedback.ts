/** What the org learned after an assessment: confirmed and pending outcomes (docs/feedback.md). */
import { sql } from "drizzle-orm";
import {
  boolean,
  check,
  foreignKey,
  index,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uuid,
} from "drizzle-orm/pg-core";
import { FEEDBACK_LABELS } from "../../schemas/vocabulary";
import { assessments } from "./assess";
import { createdAt } from "./columns";
import { tenantOrg } from "./foundation";

/**
 * One label on one assessment; several per assessment, never changed or removed (a later label
 * supersedes an earlier one, e.g. a `dispute` followed by a `chargeback`). `livemode` is the
 * assessment's: test-mode labels never reach live trust or live metrics.
 */
export const assessmentFeedback = pgTable(
  "assessment_feedback",
  {
    id: uuid("id").primaryKey(),
    orgId: tenantOrg(),
    assessmentId: uuid("assessment_id").notNull(),
    livemode: boolean("livemode").notNull(),
    label: text("label", { enum: FEEDBACK_LABELS }).notNull(),
    /** When the outcome happened (the chargeback's date); the time it was sent when not given. */
    occurredAt: timestamp("occurred_at", { withTimezone: true, precision: 3 }).notNull(),
    /** Where the label came from, as the caller names it (`stripe_dispute`, `analyst`, ...). */
    source: text("source"),
    note: text("note"),
    /** Who sent the label: an API key or a person's session (the ledger entry names it too). */
    actorType: text("actor_type"),
    actorId: text("actor_id"),
    createdAt: createdAt(),
  },
  (t) => [
    foreignKey({
      columns: [t.orgId, t.assessmentId],
      foreignColumns: [assessments.orgId, assessments.id],
      name: "assessment_feedback_assessment_fk",
    }),
    index("assessment_feedback_assessment_idx").on(t.orgId, t.assessmentId, t.createdAt),
    index("assessment_feedback_label_idx").on(t.orgId, t.livemode, t.label, t.occurredAt),
    check(
      "assessment_feedback_label_check",
      sql`${t.label} in ('fraud', 'dispute', 'chargeback', 'refund', 'legitimate')`,
    ),
  ],
);

export const TRUST_EFFECTS = ["lowered", "raised"] as const;
export type TrustEffect = (typeof TRUST_EFFECTS)[number];

/**
 * Which assessments have already moved their agent's trust, and which way: the primary key lets
 * an assessment lower trust once and raise it once, however many labels (or concurrent
 * requests) repeat the outcome. The insert that wins the key is the one that moves the counter.
 */
export const agentTrustOutcomes = pgTable(
  "agent_trust_outcomes",
  {
    orgId: tenantOrg(),
    assessmentId: uuid("assessment_id").notNull(),
    effect: text("effect", { enum: TRUST_EFFECTS }).notNull(),
    agentId: uuid("agent_id").notNull(),
    feedbackId: uuid("feedback_id").notNull(),
    createdAt: createdAt(),
  },
  (t) => [
    primaryKey({ columns: [t.orgId, t.assessmentId, t.effect] }),
    foreignKey({
      columns: [t.orgId, t.assessmentId],
      foreignColumns: [assessments.orgId, assessments.id],
      name: "agent_trust_outcomes_assessment_fk",
    }),
    check("agent_trust_outcomes_effect_check", sql`${t.effect} in ('lowered', 'raised')`),
  ],
);
