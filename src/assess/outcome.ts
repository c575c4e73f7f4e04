import { z } from "@hono/zod-openapi";
import { type Column, getTableColumns, type SQL, sql } from "drizzle-orm";
import { assessments } from "../db/schema";
import { ModelOutcome, NetworkOutcome } from "../schemas/assessments";
import { HttpSignatureOutcome } from "../schemas/http-signature";
import { Refinement } from "../schemas/reviews";
import { ACTION_KINDS, DECISIONS, RISK_LEVELS } from "../schemas/vocabulary";
import { CredentialOutcome } from "./ap2-credential";

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

export { ModelOutcome } from "../schemas/assessments";

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
  /** The active learned model's answer; absent (null) without one. */
  model: ModelOutcome.nullable().optional(),
  /** The network's counts (`outcome.network`); absent (null) when the org did not consume. */
  network: NetworkOutcome.nullable().optional(),
  /** What the agent's HTTP signature proved; absent (null) for a request without one. */
  http_signature: HttpSignatureOutcome.nullable().optional(),
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
      model: ModelOutcome.optional(),
      network: NetworkOutcome.optional(),
      http_signature: HttpSignatureOutcome.optional(),
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
      ...(record.model ? { model: record.model } : {}),
      ...(record.network ? { network: record.network } : {}),
      ...(record.http_signature ? { http_signature: record.http_signature } : {}),
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

/**
 * The stored record as one JSON value, built by the database from the columns that carry it
 * (each named as the record names it; `created` formatted as `toISOString` would). One column
 * instead of twenty-eight: over HTTP every column of a result costs a description of its own,
 * which for this row weighed more than its values, and every value a decoder. Not the inputs a
 * backtest reads nor the shadow verdict, a row's largest values, which an Outcome does not show.
 */
export const recordJson = sql<AssessmentRecord>`json_build_object(${sql.join(
  Object.keys(AssessmentRecord.shape).map(
    (key) => sql`${sql.raw(`'${key}'`)}, ${recordValue(key)}`,
  ),
  sql`, `,
)})`;

function recordValue(key: string): SQL | Column {
  if (key === "created") {
    return sql`to_char(${assessments.createdAt} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
  }
  const column = Object.values(getTableColumns(assessments)).find((c) => c.name === key);
  if (!column) throw new Error(`assessment record field ${key} has no column`);
  return column;
}
