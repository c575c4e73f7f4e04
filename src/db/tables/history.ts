/**
 * An org's payment history and what it learns from it (issue 39, docs/history.md and
 * docs/risk-model.md): payments, their labels with the time each became known, the imports
 * that loaded history, test clocks and the learned risk models.
 */
import { sql } from "drizzle-orm";
import {
  bigint,
  boolean,
  foreignKey,
  index,
  integer,
  jsonb,
  pgTable,
  text,
  timestamp,
  uniqueIndex,
  uuid,
} from "drizzle-orm/pg-core";
import {
  DECISIONS,
  FEEDBACK_LABELS,
  LABEL_SOURCES,
  RISK_MODEL_STATUSES,
} from "../../schemas/vocabulary";
import { createdAt, createdAtMs, oneOf } from "./columns";
import { tenantOrg } from "./foundation";

const instant = (name: string) => timestamp(name, { withTimezone: true, precision: 3 });

/**
 * One row per payment or action the org made: every assessment (written by a trigger on
 * `assessments`, so the persist statement is unchanged) and every imported history record.
 * Every window, velocity and payee statistic of the assess path and every training set read
 * this table, so imported history counts exactly like assessed traffic, and never appears as an
 * assessment. `decision` is null for history: it happened (it counts as approved).
 */
export const payments = pgTable(
  "payments",
  {
    id: uuid("id").primaryKey(),
    orgId: tenantOrg(),
    livemode: boolean("livemode").notNull(),
    /** The org's own transaction id (imported history); null for an assessment. */
    externalId: text("external_id"),
    assessmentId: uuid("assessment_id"),
    importId: uuid("import_id"),
    agentId: uuid("agent_id"),
    kind: text("kind").notNull(),
    /** The payee or recipient as the assess path matches it: a digest of its id. */
    counterparty: text("counterparty"),
    amount: bigint("amount", { mode: "number" }),
    currency: text("currency"),
    decision: text("decision", { enum: DECISIONS }),
    occurredAt: instant("occurred_at").notNull(),
    /** An import's record as the org sent it (the 409 compares it); null for an assessment. */
    record: jsonb("record"),
    createdAt: createdAt(),
  },
  (t) => [
    uniqueIndex("payments_external_idx")
      .on(t.orgId, t.livemode, t.externalId)
      .where(sql`${t.externalId} is not null`),
    uniqueIndex("payments_assessment_idx")
      .on(t.orgId, t.assessmentId)
      .where(sql`${t.assessmentId} is not null`),
    uniqueIndex("payments_org_id_key").on(t.orgId, t.id),
    index("payments_agent_idx").on(t.orgId, t.livemode, t.agentId, t.occurredAt),
    index("payments_counterparty_idx").on(t.orgId, t.livemode, t.counterparty, t.occurredAt),
    index("payments_time_idx").on(t.orgId, t.livemode, t.occurredAt),
    // The network's contribution cursor reads an org's mode's payments in arrival order.
    index("payments_created_idx").on(t.orgId, t.livemode, t.createdAt),
    oneOf("payments_decision_check", t.decision, DECISIONS),
  ],
);

/**
 * A payment's labels, each with the instant it became known (`known_at`): an import's
 * `labeled_at`, or a feedback label's receipt time (its test clock's under a test clock). No
 * feature and no training set reads a label before its `known_at`.
 */
export const paymentLabels = pgTable(
  "payment_labels",
  {
    id: uuid("id").primaryKey(),
    orgId: tenantOrg(),
    paymentId: uuid("payment_id").notNull(),
    livemode: boolean("livemode").notNull(),
    label: text("label", { enum: FEEDBACK_LABELS }).notNull(),
    knownAt: instant("known_at").notNull(),
    source: text("source", { enum: LABEL_SOURCES }).notNull(),
    /** The feedback row that made it; null for an import's label. */
    feedbackId: uuid("feedback_id"),
    createdAt: createdAt(),
  },
  (t) => [
    foreignKey({
      columns: [t.orgId, t.paymentId],
      foreignColumns: [payments.orgId, payments.id],
      name: "payment_labels_payment_fk",
    }),
    index("payment_labels_payment_idx").on(t.orgId, t.paymentId, t.knownAt),
    // The network's contribution cursor reads an org's mode's labels in arrival order.
    index("payment_labels_created_idx").on(t.orgId, t.livemode, t.createdAt),
    uniqueIndex("payment_labels_feedback_idx")
      .on(t.orgId, t.feedbackId)
      .where(sql`${t.feedbackId} is not null`),
    oneOf("payment_labels_label_check", t.label, FEEDBACK_LABELS),
    oneOf("payment_labels_source_check", t.source, LABEL_SOURCES),
  ],
);

/** One call of `POST /v1/history/transactions`: what it loaded (`GET /v1/history/imports`). */
export const historyImports = pgTable(
  "history_imports",
  {
    id: uuid("id").primaryKey(),
    orgId: tenantOrg(),
    livemode: boolean("livemode").notNull(),
    /** Records in the call, and those it stored (the rest were already there, unchanged). */
    records: integer("records").notNull(),
    inserted: integer("inserted").notNull(),
    /** Labels per label value, among the records stored. */
    labels: jsonb("labels").notNull(),
    firstOccurredAt: instant("first_occurred_at"),
    lastOccurredAt: instant("last_occurred_at"),
    /** SHA-256 of the call's records (canonical JSON), as its ledger entry states. */
    digest: text("digest").notNull(),
    auditEntryId: uuid("audit_entry_id"),
    createdAt: createdAtMs(),
  },
  (t) => [index("history_imports_org_idx").on(t.orgId, t.livemode, t.createdAt, t.id)],
);

/**
 * Test clocks (test mode only; Stripe's convention): a frozen instant an assessment, a
 * feedback label or a training run can be made at. Only moved forward; deleted outright.
 */
export const testClocks = pgTable(
  "test_clocks",
  {
    id: uuid("id").primaryKey(),
    orgId: tenantOrg(),
    name: text("name"),
    frozenTime: instant("frozen_time").notNull(),
    createdAt: createdAtMs(),
  },
  (t) => [index("test_clocks_org_idx").on(t.orgId, t.createdAt, t.id)],
);

/**
 * A learned risk model of one org and mode: its lifecycle, training window, metrics on the
 * held-out slice, and its parameters (JSON). At most one active and one shadow per org and mode.
 */
export const riskModels = pgTable(
  "risk_models",
  {
    id: uuid("id").primaryKey(),
    orgId: tenantOrg(),
    livemode: boolean("livemode").notNull(),
    status: text("status", { enum: RISK_MODEL_STATUSES }).notNull(),
    /** Set at each activation from the org-wide sequence, as policies' versions. */
    version: integer("version"),
    asOf: instant("as_of").notNull(),
    testClockId: uuid("test_clock_id"),
    labelDelaySeconds: integer("label_delay_seconds").notNull(),
    trainingWindowSeconds: integer("training_window_seconds").notNull(),
    /** The review and deny precision targets the thresholds were chosen for. */
    targets: jsonb("targets").notNull(),
    counts: jsonb("counts"),
    features: jsonb("features"),
    metrics: jsonb("metrics"),
    params: jsonb("params"),
    /** The digest of `params` (canonical JSON), as the model card states it. */
    paramsDigest: text("params_digest"),
    /**
     * The signed model card (compact JWS: digest of the parameters, training window, metrics),
     * made when training ends; each lifecycle entry of the ledger states it.
     */
    card: text("card"),
    failureReason: text("failure_reason"),
    createdAt: createdAtMs(),
    trainedAt: instant("trained_at"),
    activatedAt: instant("activated_at"),
  },
  (t) => [
    index("risk_models_org_idx").on(t.orgId, t.livemode, t.createdAt, t.id),
    uniqueIndex("risk_models_one_active_idx")
      .on(t.orgId, t.livemode)
      .where(sql`${t.status} = 'active'`),
    uniqueIndex("risk_models_one_shadow_idx")
      .on(t.orgId, t.livemode)
      .where(sql`${t.status} = 'shadow'`),
    uniqueIndex("risk_models_version_idx").on(t.orgId, t.version),
    oneOf("risk_models_status_check", t.status, RISK_MODEL_STATUSES),
  ],
);
