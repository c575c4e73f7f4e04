/**
 * `@agent-risk/client`: a typed client for the agent action risk assessment service and the
 * offline verifiers of what it signs. Everything here runs on WebCrypto alone (Node 20,
 * Workers, browsers); the audit export verifier is in `@agent-risk/client/audit`.
 */
export { ApiError, type ErrorCode } from "./api-error.js";
export {
  type AgentRiskClient,
  type ClientOptions,
  createClient,
  type HeadersProvider,
  type Success,
} from "./client.js";
export type { components, operations, paths } from "./generated/openapi.js";
export type { KeySource } from "./key-set.js";
export { mandateHash, RISK_DATA_NAMESPACE } from "./mandate-hash.js";
export { isSafeToRepeat, type RetryOptions } from "./retry.js";
export {
  RISK_PAYLOAD_TYP,
  type RiskPayloadClaims,
  type VerifyRiskPayloadOptions,
  verifyRiskPayload,
} from "./risk-payload.js";
export { VerificationError, type VerificationErrorCode } from "./verification-error.js";
export { type VerifyWebhookOptions, verifyWebhook, WEBHOOK_TYP } from "./webhook.js";
export type {
  AgentEventData,
  AssessmentEventData,
  AssessmentResolvedEventData,
  IntegrityAlertData,
  KeyRotationEventData,
  WebhookEvent,
  WebhookEventType,
} from "./webhook-event.js";
