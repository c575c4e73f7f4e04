import { HTTPException } from "hono/http-exception";
import type { ContentfulStatusCode } from "hono/utils/http-status";

/**
 * The closed set of machine-readable error codes and the status each one answers with.
 * A 4xx is the caller's to fix; a 5xx means the service could not complete the request.
 */
export const errorStatus = {
  invalid_request: 400,
  invalid_json: 400,
  invalid_scope: 400,
  invalid_cursor: 400,
  sign_in_failed: 400,
  unauthenticated: 401,
  insufficient_scope: 403,
  csrf_failed: 403,
  session_required: 403,
  live_key_required: 403,
  no_organization: 403,
  not_found: 404,
  route_not_found: 404,
  method_not_allowed: 405,
  request_too_large: 413,
  url_not_allowed: 400,
  test_mode_only: 400,
  endpoint_limit_reached: 400,
  card_unreachable: 400,
  jwks_unreachable: 400,
  unknown_mandate_type: 400,
  mandate_type_mismatch: 400,
  unsupported_a2a_version: 400,
  a2a_version_mismatch: 400,
  idempotency_key_reused: 400,
  grant_invalid: 400,
  grant_expired: 400,
  grant_mismatch: 400,
  provider_signature_invalid: 400,
  receipt_signature_invalid: 400,
  receipt_reference_mismatch: 400,
  spending_cap_reached: 402,
  rate_limited: 429,
  agent_revoked: 409,
  agent_not_active: 409,
  agent_status_changed: 409,
  principal_erased: 409,
  policy_activation_conflict: 409,
  policy_active: 409,
  policy_shadow_conflict: 409,
  risk_model_not_trained: 409,
  risk_model_active: 409,
  risk_model_activation_conflict: 409,
  risk_model_shadow_conflict: 409,
  key_in_use: 409,
  key_revoked: 409,
  mandate_revoked: 409,
  grant_already_redeemed: 409,
  session_exists: 409,
  session_conflict: 409,
  spend_confirmation_required: 409,
  plan_already_active: 409,
  review_already_resolved: 409,
  review_expired: 409,
  review_spend_refused: 409,
  review_recheck_failed: 409,
  feedback_limit_reached: 409,
  history_record_conflict: 409,
  receipt_conflict: 409,
  mandate_invalid: 422,
  credential_unparseable: 422,
  mandate_mismatch: 422,
  session_chain_broken: 422,
  no_labeled_history: 422,
  internal_error: 500,
  database_unavailable: 503,
  signing_key_unavailable: 503,
  identity_provider_unavailable: 503,
  ledger_unavailable: 503,
  encryption_key_unavailable: 503,
  webhook_queue_unavailable: 503,
  training_queue_unavailable: 503,
  billing_provider_unavailable: 503,
  service_misconfigured: 503,
} as const satisfies Record<string, ContentfulStatusCode>;

export type ErrorCode = keyof typeof errorStatus;

/**
 * What each code tells a person: one sentence saying what went wrong and what to do about it,
 * the `message` of every error body unless the call site knows better (ApiError's `message`
 * option). Typed by the table above: a code without a message does not compile. The served
 * reference lists every code with its message (src/http/error-reference.ts); `doc_url` points
 * there.
 */
export const errorMessages = {
  invalid_request:
    "The request failed validation: correct each field named in details and send it again.",
  invalid_json:
    "The request body is not valid JSON: send a JSON document with Content-Type: application/json.",
  invalid_scope:
    "A requested scope is unknown or cannot be given to an API key: remove the ones named in details.",
  invalid_cursor:
    "The cursor was not issued by this API: pass the previous page's next_cursor unchanged, or omit it to start over.",
  sign_in_failed:
    "The sign-in was refused (details.reason says why): start again from the console's sign-in page.",
  unauthenticated:
    "The request carries no valid credential: send an API key as x-api-key, or a session token as Authorization: Bearer.",
  insufficient_scope:
    "The credential lacks the scope this route needs: use a key or a role that holds the scope named in details.required.",
  csrf_failed:
    "The console's session cookie came without its x-csrf-token header: send the value of the __Host-ar_csrf cookie in it.",
  session_required:
    "This route is for people signed in to the console: call it with a session token, not an API key.",
  live_key_required:
    "A test key cannot change what live and test mode share: use a live key or a session.",
  no_organization:
    "The session belongs to no organization of this request: create one with POST /v1/orgs, or name one of yours in x-org-id.",
  not_found:
    "Nothing with this id exists in your organization: check the id, and the key's organization and mode.",
  route_not_found: "No route has this path: check it against the API reference at /docs.",
  method_not_allowed:
    "This path does not take this method: use one of those in the Allow header (details.allowed).",
  request_too_large: "The request body is larger than 256 KiB: send a smaller body.",
  url_not_allowed:
    "The URL points somewhere this service never connects to: use a public https URL.",
  test_mode_only:
    "This exists only in test mode (test clocks): use a test key, or a session with x-mode: test.",
  endpoint_limit_reached:
    "This mode already has 16 webhook endpoints: delete one before adding another.",
  card_unreachable:
    "The Agent Card could not be fetched: its URL must answer 2xx JSON of at most 64 KiB within 5 seconds, without redirecting.",
  jwks_unreachable:
    "The jwks_url gave no JWK Set with a usable key: check that it serves the issuer's public keys as JSON.",
  unknown_mandate_type:
    "The mandate is not one of the four AP2 v0.2 mandate types: check its vct, or mandateType.",
  mandate_type_mismatch:
    "mandateType contradicts the mandate's vct: send the type that matches the mandate, or leave mandateType out.",
  unsupported_a2a_version: "This A2A version is not supported: send 0.3 or 1.0.",
  a2a_version_mismatch:
    "The A2A-Version header and a2a.a2a_version differ: send the same version in both.",
  idempotency_key_reused:
    "This idempotency_key was already used with a different mandate: use a new key for a new request.",
  grant_invalid:
    "The grant was not signed by this service: redeem the grant exactly as it was issued.",
  grant_expired: "The grant has expired: ask for a new decision to get a fresh grant.",
  grant_mismatch:
    "The request or its executor differs from what the grant allows: compare the fields named in details with the grant.",
  provider_signature_invalid:
    "The Stripe-Signature is missing, wrong, or outside its 5-minute window: check the endpoint's signing secret and the clocks.",
  receipt_signature_invalid:
    "The receipt's iss names a credential issuer of the organization, but none of its keys verifies the JWS: send the receipt exactly as its issuer signed it.",
  receipt_reference_mismatch:
    "The receipt's reference is not the hash of this assessment's closed mandate (details names the expected ones): record it against the assessment of its payment.",
  spending_cap_reached:
    "Billing this call would pass the organization's spending cap: an owner can raise or lift the cap.",
  rate_limited: "Too many requests: wait the Retry-After seconds, then try again.",
  agent_revoked: "The agent is revoked, which is final: register a new agent instead.",
  agent_not_active:
    "The grant's agent was suspended or revoked after the grant was issued: the grant can no longer be redeemed.",
  agent_status_changed:
    "The agent's status changed while the update was applied: read the agent again, then retry.",
  principal_erased:
    "The principal's personal data was erased: no agent can be registered for it any more.",
  policy_activation_conflict: "Another policy was activated at the same instant: retry.",
  policy_active:
    "The active policy cannot also be the shadow policy: make a draft the shadow instead.",
  policy_shadow_conflict: "Another policy was made the shadow at the same instant: retry.",
  risk_model_not_trained:
    "Only a trained risk model (ready, shadow or retired) can be activated or shadowed: wait for training to end, or train another.",
  risk_model_active:
    "The active risk model cannot also be the shadow model: shadow a ready or retired model instead.",
  risk_model_activation_conflict: "Another risk model was activated at the same instant: retry.",
  risk_model_shadow_conflict: "Another risk model was made the shadow at the same instant: retry.",
  key_in_use:
    "This public key is registered to another agent of the organization: give each agent its own key.",
  key_revoked: "This public key was revoked and can never be registered again: use a new key pair.",
  mandate_revoked:
    "The action mandate was revoked after the grant was issued: the grant can no longer be redeemed.",
  grant_already_redeemed:
    "The grant was already redeemed (details names that redemption): a grant is redeemed once.",
  session_exists:
    "The agent already has a session of that name: use the one named in details.id, or another name.",
  session_conflict:
    "The events do not continue the session's head (a lost race or a stale client): read the session, then send what follows it.",
  spend_confirmation_required:
    "Raising or lifting a spending cap takes an owner's confirmation: an owner confirms it with POST /v1/billing/spend_confirmations.",
  plan_already_active: "The organization is already on this plan: there is nothing to buy.",
  review_already_resolved: "The review was already resolved: read it to see how, and by whom.",
  review_expired: "The review expired or is past its SLA: it can no longer be resolved.",
  review_spend_refused:
    "Approving would spend a credential the ledger refused (details.reason): the review cannot be approved.",
  review_recheck_failed:
    "The credential no longer holds (details.reason: its issuer, key, agent or time window changed since the verdict): the review can only be denied, or left to expire.",
  feedback_limit_reached:
    "The assessment already has its 100 feedback labels: no more can be added.",
  history_record_conflict:
    "A record's id is already stored with other content (details names each): a stored record never changes, so send it as it was or under a new id.",
  receipt_conflict:
    "The assessment already has another receipt for this payment_id (details names it): a recorded receipt never changes.",
  mandate_invalid: "The AP2 mandate fails its schema: fix each path named in details.",
  credential_unparseable:
    "The credential cannot be split into its hops: details says where it breaks.",
  mandate_mismatch:
    "The mandate sent beside the credential is not the credential's leaf payload: send the leaf's payload, or the credential alone.",
  session_chain_broken: "The session's event chain is broken: details names the first break.",
  no_labeled_history:
    "No assessment of the range has a matching label: widen the range, or label assessments first.",
  internal_error:
    "The service failed to complete the request: retry, and quote the x-request-id header if it happens again.",
  database_unavailable: "The database cannot be reached right now: retry shortly.",
  signing_key_unavailable:
    "The service's signing key is missing or unusable, so nothing can be signed: the operator must fix the deployment.",
  identity_provider_unavailable:
    "Session tokens cannot be verified right now (the identity provider is not configured or not answering): retry shortly, or use an API key.",
  ledger_unavailable: "The audit ledger cannot be reached right now: retry shortly.",
  encryption_key_unavailable:
    "The key that seals personal data is missing or unusable: the operator must fix the deployment.",
  webhook_queue_unavailable: "This deployment has no webhook queue: the operator must bind one.",
  training_queue_unavailable:
    "The risk model could not be queued for training (it is marked failed): try again later.",
  billing_provider_unavailable:
    "The billing provider could not be reached or refused the request: retry shortly.",
  service_misconfigured:
    "A setting this request needs is missing or invalid (details.setting names it): the operator must fix the deployment.",
} as const satisfies Record<ErrorCode, string>;

/** The one error envelope: every error the service answers is this object (docs/api.md, Errors). */
export interface ErrorBody {
  error: ErrorCode;
  /** One sentence a person can act on. */
  message: string;
  details?: unknown;
  /** The code's entry in the served reference (`<PUBLIC_BASE_URL>/docs#…`). */
  doc_url?: string;
}

export interface ApiErrorOptions {
  cause?: unknown;
  /** Seconds a `429` asks the caller to wait (the `Retry-After` header). */
  retryAfter?: number;
  /** What to tell a person, where the call site knows better than the code's own message. */
  message?: string;
}

/**
 * The one error type of the service: a code from the table above, and optional details.
 * `Error.message` stays the bare code (the ledger object's errors cross the Durable Object
 * boundary as their message and are turned back into codes, src/ledger/ledger.ts); what a person
 * reads is `explanation`, the body's `message`.
 */
export class ApiError extends HTTPException {
  readonly code: ErrorCode;
  readonly details: unknown;
  readonly retryAfter: number | undefined;
  readonly explanation: string;

  constructor(code: ErrorCode, details?: unknown, options: ApiErrorOptions = {}) {
    super(errorStatus[code], { message: code, cause: options.cause });
    this.code = code;
    this.details = details;
    this.retryAfter = options.retryAfter;
    this.explanation = options.message ?? errorMessages[code];
  }

  /** The body without `doc_url`, which needs the service's address (src/http/errors.ts). */
  get body(): ErrorBody {
    return {
      error: this.code,
      message: this.explanation,
      ...(this.details === undefined ? {} : { details: this.details }),
    };
  }
}

/** The 404 of every read by id: another org's row is, to this caller, one that does not exist. */
export function orNotFound<T>(row: T | undefined): T {
  if (row === undefined) throw new ApiError("not_found");
  return row;
}
