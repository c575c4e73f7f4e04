import { z } from "@hono/zod-openapi";
import { NetworkOutcome } from "./assessments";
import { VerifyReport } from "./audit";
import { SpendConfirmation } from "./billing";
import { REVIEW_DECISIONS, REVIEW_REASONS } from "./reviews";
import {
  ACTION_KINDS,
  AGENT_STATUSES,
  DECISIONS,
  LEDGER_CONFLICT,
  RISK_LEVELS,
  RISK_TIERS,
} from "./vocabulary";

// The body of a webhook delivery, one member per event type the outbox carries
// (EVENT_TYPES in schemas/vocabulary.ts, docs/webhooks.md "Events"). Not the body of any route: a receiver reads
// it, so it is registered as an OpenAPI component of its own (src/app.ts), and the event
// builders written in TypeScript take their data types from here. Some events are built in SQL
// (the agent trigger, the key rotation, the spend warning): test/worker/openapi-signed-objects
// checks real deliveries of them against this schema.

export const AssessmentEventData = z
  .object({
    assessment_id: z.string(),
    decision: z.enum(DECISIONS),
    risk_level: z.enum(RISK_LEVELS),
    risk_score: z.int().min(0).max(100),
    agent_id: z.string().nullable().openapi({ description: "Null: no agent was identified" }),
    kind: z.enum(ACTION_KINDS),
    // The assessment's `outcome.network` itself, present exactly when the outcome has it.
    network: NetworkOutcome.optional(),
  })
  .openapi("AssessmentEventData");
export type AssessmentEventData = z.infer<typeof AssessmentEventData>;

export const AssessmentResolvedEventData = z
  .object({
    assessment_id: z.string(),
    review_id: z.string(),
    status: z.enum(["resolved", "expired"]),
    decision: z.enum(REVIEW_DECISIONS),
    original_decision: z.literal("review"),
    reason: z.enum(REVIEW_REASONS),
    resolved_by: z
      .object({ type: z.string(), id: z.string() })
      .openapi({ description: "`user`, `api_key` or `system` (the SLA sweep) and its id" }),
    resolved_at: z.string(),
    agent_id: z.string().nullable(),
    risk_payload: z
      .object({ jws: z.string(), kid: z.string() })
      .openapi({ description: "The resolution's own Risk Payload (claims: RiskPayloadClaims)" }),
  })
  .openapi("AssessmentResolvedEventData");
export type AssessmentResolvedEventData = z.infer<typeof AssessmentResolvedEventData>;

export const AgentEventData = z
  .object({
    agent_id: z.string(),
    principal_id: z.string(),
    status: z.enum(AGENT_STATUSES),
    trust_score: z.int().min(0).max(100),
    risk_tier: z.enum(RISK_TIERS),
    previous_score: z.int().nullable(),
    previous_tier: z.enum(RISK_TIERS).nullable(),
    reason: z.string().openapi({ description: "What moved it: `assessment`, `key`, `card`…" }),
  })
  .openapi("AgentEventData");

const report = VerifyReport.shape;
export const IntegrityAlertData = z
  .union([
    z
      .object({
        reason: z.literal(LEDGER_CONFLICT),
        sequences: z.array(z.int()).openapi({ description: "Sequences another writer took" }),
      })
      .openapi({ description: "The ledger refused a conflicting write" }),
    z
      .object({
        checked: report.checked,
        head: report.head,
        first_break: report.first_break,
        first_invalid: report.checkpoints.shape.first_invalid,
      })
      .openapi({ description: "`GET /v1/audit/verify` found a break (its report's terms)" }),
  ])
  .openapi("IntegrityAlertData");
export type IntegrityAlertData = z.infer<typeof IntegrityAlertData>;

export const KeyRotationEventData = z
  .object({
    kid: z.string().openapi({ description: "The key now signing" }),
    previous_kid: z.string(),
    rotated_at: z.string(),
  })
  .openapi("KeyRotationEventData");

const Minor = z.int().min(0);
const spendTerms = {
  period_start: z.string().openapi({ description: "The billing period, `YYYY-MM-DD`" }),
  spending_cap: Minor,
  amount_due: Minor.openapi({ description: "The period's usage charge, in minor units" }),
  currency: z.string(),
  assessments: z.int(),
  plan: z.string().openapi({ description: "The org's plan id (`free`, `starter`, `growth`…)" }),
};
export const SpendDeniedEventData = z.object(spendTerms).openapi("SpendDeniedEventData");
export type SpendDeniedEventData = z.infer<typeof SpendDeniedEventData>;
export const SpendReviewEventData = z
  .object({ ...spendTerms, threshold_percent: z.int() })
  .openapi("SpendReviewEventData");

/** The envelope every delivery shares, around its type's data. */
function event<const T extends readonly [string, ...string[]], D extends z.ZodType>(
  types: T,
  data: D,
) {
  return z.object({
    id: z
      .string()
      .openapi({ description: "The delivery's id, equal to `webhook-id`: dedupe on it" }),
    type: types.length === 1 ? z.literal(types[0]) : z.enum(types),
    created: z.int().openapi({ description: "When the event happened, Unix seconds" }),
    livemode: z.boolean(),
    data,
  });
}

export const WebhookEvent = z
  .union([
    event(
      ["assessment.completed", "assessment.denied", "assessment.flagged"] as const,
      AssessmentEventData,
    ).openapi("AssessmentEvent"),
    event(["assessment.resolved"] as const, AssessmentResolvedEventData).openapi(
      "AssessmentResolvedEvent",
    ),
    event(
      ["agent.trust_changed", "agent.suspended", "agent.revoked"] as const,
      AgentEventData,
    ).openapi("AgentEvent"),
    event(["audit.integrity_alert"] as const, IntegrityAlertData).openapi("IntegrityAlertEvent"),
    event(["key.rotation"] as const, KeyRotationEventData).openapi("KeyRotationEvent"),
    event(["spend.review_required"] as const, SpendReviewEventData).openapi("SpendReviewEvent"),
    event(["spend.denied"] as const, SpendDeniedEventData).openapi("SpendDeniedEvent"),
    event(["spend.confirmed"] as const, SpendConfirmation).openapi("SpendConfirmedEvent"),
  ])
  .openapi("WebhookEvent", {
    description:
      "The JSON body of a webhook delivery, one member per event type (docs/webhooks.md). " +
      "Verify the raw body first: `x-service-signature` (a detached JWS) or `webhook-signature` " +
      "(Standard Webhooks, the endpoint's secret)",
  });
export type WebhookEvent = z.infer<typeof WebhookEvent>;
