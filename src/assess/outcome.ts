import { z } from "@hono/zod-openapi";
import { getTableColumns } from "drizzle-orm";
import { assessments } from "../db/schema";
import { Refinement } from "../schemas/reviews";
import { CredentialOutcome } from "./credential";
import { ACTION_KINDS } from "./request";

export const DECISIONS = ["approve", "review", "deny"] as const;
export const RISK_LEVELS = ["normal", "elevated", "highest"] as const;

const SignalSchema = z.object({ category: z.string(), type: z.string(), severity: z.string() });
const RejectionReasonSchema = z.object({
  key: z.string(),
  category: z.string(),
  description: z.string(),
});
const ConfidencesSchema = z
  .object({
    agent_identity: z.number(),
    mandate_validity: z.number(),
    policy_adherence: z.number(),
    behavioral_risk: z.number(),
    recipient_risk: z.number(),
  })
  .openapi({ description: "Each from 0 to 1; see docs/risk-model.md" });
const AgentSnapshotSchema = z
  .object({ id: z.string(), trust_score: z.number().int(), risk_tier: z.string() })
  .openapi({ description: "The acting agent as it stood when assessed; null when unknown" });

type Signal = z.infer<typeof SignalSchema>;
type RejectionReason = z.infer<typeof RejectionReasonSchema>;
type Confidences = z.infer<typeof ConfidencesSchema>;
export type AgentSnapshot = z.infer<typeof AgentSnapshotSchema>;

/**
 * An assessment as it is stored and as it is answered. The Outcome is a pure function of the
 * record (plus whether a checkpoint anchors its ledger entry yet), so `POST /v1/assess`, its
 * replays and `GET /v1/assessments/{id}` answer the same object. Built from the Outcome's own
 * parts, so the two cannot drift.
 */
export const AssessmentRecord = z.object({
  id: z.string(),
  created: z.string(),
  livemode: z.boolean(),
  kind: z.enum(ACTION_KINDS),
  mandate_type: z.string().nullable(),
  mandate_id: z.string(),
  content_hash: z.string(),
  idempotency_key: z.string().nullable(),
  agent: AgentSnapshotSchema.nullable(),
  decision: z.enum(DECISIONS),
  risk_level: z.enum(RISK_LEVELS),
  risk_score: z.number().int(),
  reason: z.string(),
  policy_version: z.number().int(),
  confidences: ConfidencesSchema,
  signals: z.array(SignalSchema),
  rejection_reasons: z.array(RejectionReasonSchema),
  jws: z.string(),
  kid: z.string(),
  verify_url: z.string(),
  audit_entry_id: z.string(),
  audit_sequence: z.number().int(),
  a2a: z.record(z.string(), z.unknown()).nullable(),
  latency_ms: z.number().int(),
  amount: z.number().nullable(),
  currency: z.string().nullable(),
  counterparty: z.string().nullable(),
  /** What an AP2 credential proved; absent (null) for an assessment without one. */
  credential: CredentialOutcome.nullable().optional(),
});
export type AssessmentRecord = z.infer<typeof AssessmentRecord>;

export const Outcome = z
  .object({
    object: z.literal("assessment"),
    id: z.string(),
    created: z.string(),
    livemode: z.boolean(),
    kind: z.enum(ACTION_KINDS),
    outcome: z.object({
      decision: z.enum(DECISIONS),
      risk_level: z.enum(RISK_LEVELS),
      risk_score: z.number().int().min(0).max(100),
      reason: z.string(),
      policy_version: z.number().int(),
    }),
    confidences: ConfidencesSchema,
    signals: z.array(SignalSchema),
    rejection_reasons: z.array(RejectionReasonSchema),
    risk_payload: z
      .object({
        jws: z.string(),
        kid: z.string(),
        alg: z.literal("EdDSA"),
        verify_url: z.string(),
      })
      .openapi({
        description:
          "The signed verdict: `jws` is a compact JWS whose payload is a `RiskPayloadClaims`, " +
          "signed by the key `kid` of `/.well-known/jwks.json`",
      }),
    audit: z.object({
      entry_id: z.string(),
      sequence: z.number().int(),
      status: z.enum(["pending", "anchored"]).openapi({
        description:
          "`anchored` once a signed checkpoint covers the entry (the one field " +
          "that can change between two reads of the same assessment)",
      }),
    }),
    refinement: Refinement.nullable(),
    agent: AgentSnapshotSchema.nullable(),
    credential: CredentialOutcome.nullable(),
    latency_ms: z.number().int().openapi({
      description: "From receipt of the request to the signed decision (persistence excluded)",
    }),
  })
  .openapi("Outcome");
export type Outcome = z.infer<typeof Outcome>;

/**
 * The Outcome of a record, with its review item's state as `refinement` (null unless the
 * decision is `review`): the one field besides `audit.status` a later read may see change.
 */
export function toOutcome(
  record: AssessmentRecord,
  anchored: boolean,
  refinement: Refinement | null,
): Outcome {
  return {
    object: "assessment",
    id: record.id,
    created: record.created,
    livemode: record.livemode,
    kind: record.kind,
    outcome: {
      decision: record.decision,
      risk_level: record.risk_level,
      risk_score: record.risk_score,
      reason: record.reason,
      policy_version: record.policy_version,
    },
    confidences: record.confidences,
    signals: record.signals,
    rejection_reasons: record.rejection_reasons,
    risk_payload: { jws: record.jws, kid: record.kid, alg: "EdDSA", verify_url: record.verify_url },
    audit: {
      entry_id: record.audit_entry_id,
      sequence: record.audit_sequence,
      status: anchored ? "anchored" : "pending",
    },
    refinement,
    agent: record.agent,
    credential: record.credential ?? null,
    latency_ms: record.latency_ms,
  };
}

// The columns an Outcome is made of: not the inputs a backtest reads nor the shadow verdict,
// a row's largest values, which a read that answers an Outcome would decode for nothing.
const {
  orgId: _org,
  agentId: _agent,
  inputs: _inputs,
  shadow: _shadow,
  ...outcome
} = getTableColumns(assessments);
export const outcomeColumns = outcome;
export type OutcomeRow = Pick<typeof assessments.$inferSelect, keyof typeof outcomeColumns>;

/** The record from its row (see persist.ts for the way in). */
export function fromRow(row: OutcomeRow): AssessmentRecord {
  return {
    id: row.id,
    created: row.createdAt.toISOString(),
    livemode: row.livemode,
    kind: row.kind as AssessmentRecord["kind"],
    mandate_type: row.mandateType,
    mandate_id: row.mandateId,
    content_hash: row.contentHash,
    idempotency_key: row.idempotencyKey,
    agent: row.agent as AgentSnapshot | null,
    decision: row.decision,
    risk_level: row.riskLevel,
    risk_score: row.riskScore,
    reason: row.reason,
    policy_version: row.policyVersion,
    confidences: row.confidences as Confidences,
    signals: row.signals as Signal[],
    rejection_reasons: row.rejectionReasons as RejectionReason[],
    jws: row.jws,
    kid: row.kid,
    verify_url: row.verifyUrl,
    audit_entry_id: row.auditEntryId,
    audit_sequence: row.auditSequence,
    a2a: row.a2a as Record<string, unknown> | null,
    latency_ms: row.latencyMs,
    amount: row.amount,
    currency: row.currency,
    counterparty: row.counterparty,
    credential: row.credential as CredentialOutcome | null,
  };
}
