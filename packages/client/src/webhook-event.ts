import type { components } from "./generated/openapi.js";

// The service's own schemas (src/schemas/webhook-events.ts), as its OpenAPI document publishes
// them: regenerated with `npm run client:generate`, never written by hand here.
type Schemas = components["schemas"];

/** The data of the assessment events (`assessment.completed`, `.denied`, `.flagged`). */
export type AssessmentEventData = Schemas["AssessmentEventData"];

/** The data of `assessment.resolved`: a review resolved by a person or a key, or expired. */
export type AssessmentResolvedEventData = Schemas["AssessmentResolvedEventData"];

/** The data of the agent events (`agent.trust_changed`, `.suspended`, `.revoked`). */
export type AgentEventData = Schemas["AgentEventData"];

/** The data of `audit.integrity_alert`: a ledger conflict, or a failed verification's report. */
export type IntegrityAlertData = Schemas["IntegrityAlertData"];

export type KeyRotationEventData = Schemas["KeyRotationEventData"];

/** A webhook delivery's body (docs/webhooks.md, "Events"): narrow it on `type`. */
export type WebhookEvent = Schemas["WebhookEvent"];

export type WebhookEventType = WebhookEvent["type"];
