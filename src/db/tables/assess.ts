/** Policies, assessments and the assessed mandates. */
import { sql } from "drizzle-orm";
import {
  bigint,
  boolean,
  check,
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
import { DECISIONS, RISK_LEVELS } from "../../schemas/vocabulary";
import { createdAt, createdAtMs, oneOf } from "./columns";
import { tenantOrg } from "./foundation";

/**
 * Policies: drafts, and at most one active per org (a partial unique index). `version` is
 * assigned at each activation from an org-wide sequence, so it only ever grows. At most one
 * draft per org is the shadow policy (docs/shadow-policies.md): evaluated on every assessment
 * next to the active one, never acted on.
 */
export const policies = pgTable(
  "policies",
  {
    id: uuid("id").primaryKey(),
    orgId: tenantOrg(),
    name: text("name").notNull(),
    rules: jsonb("rules").notNull(),
    /** `rules.velocity.window` in seconds, so the assess context query can use it directly. */
    velocityWindowSeconds: integer("velocity_window_seconds"),
    /**
     * The window aggregates the rule list reads (`[{key, measure, per, seconds}]`,
     * src/assess/rules/attributes.ts), so the assess context query counts them in its one round trip.
     */
    aggregates: jsonb("aggregates").notNull().default(sql`'[]'::jsonb`),
    status: text("status", { enum: ["draft", "active"] })
      .notNull()
      .default("draft"),
    version: integer("version"),
    /** The org's shadow policy: always a draft (activation clears it). */
    shadow: boolean("shadow").notNull().default(false),
    createdAt: createdAt(),
    activatedAt: timestamp("activated_at", { withTimezone: true }),
  },
  (t) => [
    uniqueIndex("policies_one_active_idx").on(t.orgId).where(sql`${t.status} = 'active'`),
    uniqueIndex("policies_version_idx").on(t.orgId, t.version),
    index("policies_org_idx").on(t.orgId, t.id),
    check("policies_status_check", sql`${t.status} in ('draft', 'active')`),
    uniqueIndex("policies_one_shadow_idx").on(t.orgId).where(sql`${t.shadow}`),
    check("policies_shadow_draft_check", sql`not (${t.shadow} and ${t.status} = 'active')`),
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
    orgId: tenantOrg(),
    createdAt: createdAtMs(),
    livemode: boolean("livemode").notNull(),
    kind: text("kind").notNull(),
    mandateType: text("mandate_type"),
    mandateId: uuid("mandate_id").notNull(),
    contentHash: text("content_hash").notNull(),
    idempotencyKey: text("idempotency_key"),
    agentId: uuid("agent_id"),
    agent: jsonb("agent"),
    decision: text("decision", { enum: DECISIONS }).notNull(),
    riskLevel: text("risk_level", { enum: RISK_LEVELS }).notNull(),
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
    /**
     * What the model read (src/assess/rules/inputs.ts), so a backtest replays a policy over the inputs
     * as they were; null for assessments made before it was recorded.
     */
    inputs: jsonb("inputs"),
    /**
     * What an AP2 credential proved (the Outcome's `credential`, docs/assess.md); null for an
     * assessment made without one.
     */
    credential: jsonb("credential"),
    /**
     * The shadow policy's would-be verdict (`{policy_id, version, decision, risk_score, reason,
     * rule}`, docs/shadow-policies.md); null when the org shadowed nothing. Never signed, never
     * in the Outcome.
     */
    shadow: jsonb("shadow"),
    /**
     * The active risk model's answer (`{id, version, probability}`, the Outcome's `model`,
     * docs/risk-model.md); null when the org's mode has no active model.
     */
    model: jsonb("model"),
    /**
     * The shadow risk model's would-be answer (`{id, version, probability, risk_score,
     * decision}`); never signed, never in the Outcome.
     */
    shadowModel: jsonb("shadow_model"),
    /**
     * The network's counts as the Outcome shows them (`outcome.network`, docs/network.md); null
     * when the org's mode does not consume network signals.
     */
    network: jsonb("network"),
    /**
     * The identifiers this payment can contribute to the network, raw and internal
     * (`{agent_key, issuer_key, instrument}`: RFC 7638 thumbprints and the instrument's
     * fingerprint; the payee is `counterparty`). Digested under the network key only when
     * contributed (src/network/contributions.ts); never in the Outcome, never leaves the org.
     */
    networkIds: jsonb("network_ids"),
    /**
     * What the agent's HTTP message signature proved (`outcome.http_signature`,
     * docs/http-signatures.md); null when the request carried none.
     */
    httpSignature: jsonb("http_signature"),
  },
  (t) => [
    uniqueIndex("assessments_content_idx").on(t.orgId, t.contentHash),
    uniqueIndex("assessments_idempotency_idx").on(t.orgId, t.livemode, t.idempotencyKey),
    index("assessments_org_idx").on(t.orgId, t.id),
    // The target of org-scoped foreign keys (feedback): a row can only name its own org's assessment.
    uniqueIndex("assessments_org_id_key").on(t.orgId, t.id),
    index("assessments_agent_idx").on(t.orgId, t.agentId, t.createdAt),
    // One mode's window of the org's assessments: the per-day summary (GET /v1/assessments/summary).
    index("assessments_created_idx").on(t.orgId, t.livemode, t.createdAt),
    index("assessments_counterparty_idx").on(t.orgId, t.agentId, t.counterparty),
    // Per-payee window aggregates of the rule language, across the org's agents.
    index("assessments_payee_window_idx").on(t.orgId, t.counterparty, t.createdAt),
    // The shadow report: one policy's shadowed assessments in a window.
    index("assessments_shadow_idx")
      .on(t.orgId, sql`(${t.shadow}->>'policy_id')`, t.createdAt)
      .where(sql`${t.shadow} is not null`),
    // The shadow model's report: one model's shadowed assessments in a window.
    index("assessments_shadow_model_idx")
      .on(t.orgId, sql`(${t.shadowModel}->>'id')`, t.createdAt)
      .where(sql`${t.shadowModel} is not null`),
    // The list's search and filters (GET /v1/assessments: docs/assess.md, "Listing
    // assessments"), from the recorded inputs: the payee's id in keyset order, the payee's name
    // by prefix (text_pattern_ops: LIKE 'x%' whatever the collation), the transaction exactly;
    // the amount and score ranges.
    index("assessments_payee_idx")
      .on(t.orgId, t.livemode, sql`(${t.inputs} #>> '{facts,payee,id}')`, t.id)
      .where(sql`(${t.inputs} #>> '{facts,payee,id}') is not null`),
    index("assessments_payee_name_idx")
      .on(t.orgId, sql`lower(${t.inputs} #>> '{facts,payee,name}') text_pattern_ops`)
      .where(sql`(${t.inputs} #>> '{facts,payee,name}') is not null`),
    index("assessments_transaction_idx")
      .on(t.orgId, sql`(${t.inputs} #>> '{facts,transactionId}')`)
      .where(sql`(${t.inputs} #>> '{facts,transactionId}') is not null`),
    index("assessments_amount_idx").on(t.orgId, t.livemode, t.currency, t.amount),
    index("assessments_score_idx").on(t.orgId, t.livemode, t.riskScore, t.id),
    oneOf("assessments_decision_check", t.decision, DECISIONS),
  ],
);

/**
 * The assessed mandates, as submitted (without the service's injected risk payload), until the
 * principal of the assessed agent is erased.
 */
export const mandates = pgTable(
  "mandates",
  {
    id: uuid("id").primaryKey(),
    orgId: tenantOrg(),
    assessmentId: uuid("assessment_id").notNull(),
    kind: text("kind").notNull(),
    mandateType: text("mandate_type"),
    vct: text("vct"),
    contentHash: text("content_hash").notNull(),
    /** `sha256:<hex>` of the RFC 8785 mandate; the Risk Payload binds it. */
    mandateHash: text("mandate_hash").notNull(),
    mandate: jsonb("mandate").notNull(),
    livemode: boolean("livemode").notNull(),
    createdAt: createdAtMs(),
    /**
     * Set when the principal of the assessed agent was erased: the members of `mandate` named
     * in `erased_fields` were overwritten with null (`erase_principal_copies`, 0001).
     */
    erasedAt: timestamp("erased_at", { withTimezone: true, precision: 3 }),
    erasedFields: text("erased_fields").array(),
  },
  (t) => [
    uniqueIndex("mandates_content_idx").on(t.orgId, t.contentHash),
    index("mandates_org_idx").on(t.orgId, t.id),
  ],
);

/**
 * The nonces of agents' HTTP message signatures seen on the assess path, per org, mode and
 * key (docs/http-signatures.md, "Nonces"): `digest` is SHA-256 of the `keyid` and the nonce,
 * kept until `expires_at`, past which the signature would be refused for its age anyway. The
 * context read inserts the request's in its own batch; a conflict with a live row is a replay.
 */
export const httpSignatureNonces = pgTable(
  "http_signature_nonces",
  {
    orgId: tenantOrg(),
    livemode: boolean("livemode").notNull(),
    digest: text("digest").notNull(),
    expiresAt: timestamp("expires_at", { withTimezone: true }).notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.orgId, t.livemode, t.digest] }),
    index("http_signature_nonces_expiry_idx").on(t.orgId, t.livemode, t.expiresAt),
  ],
);
