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
  request_too_large: 400,
  url_not_allowed: 400,
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
  spending_cap_reached: 402,
  rate_limited: 429,
  agent_revoked: 409,
  agent_not_active: 409,
  agent_status_changed: 409,
  principal_erased: 409,
  policy_activation_conflict: 409,
  policy_active: 409,
  policy_shadow_conflict: 409,
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
  billing_provider_unavailable: 503,
  service_misconfigured: 503,
} as const satisfies Record<string, ContentfulStatusCode>;

export type ErrorCode = keyof typeof errorStatus;

export interface ErrorBody {
  error: ErrorCode;
  details?: unknown;
}

/** The one error type of the service: a code from the table above, and optional details. */
export class ApiError extends HTTPException {
  readonly code: ErrorCode;
  readonly details: unknown;
  /** Seconds a `429` asks the caller to wait (the `Retry-After` header). */
  readonly retryAfter: number | undefined;

  constructor(
    code: ErrorCode,
    details?: unknown,
    options?: { cause?: unknown; retryAfter?: number },
  ) {
    super(errorStatus[code], { message: code, cause: options?.cause });
    this.code = code;
    this.details = details;
    this.retryAfter = options?.retryAfter;
  }

  get body(): ErrorBody {
    return this.details === undefined
      ? { error: this.code }
      : { error: this.code, details: this.details };
  }
}

/** The 404 of every read by id: another org's row is, to this caller, one that does not exist. */
export function orNotFound<T>(row: T | undefined): T {
  if (row === undefined) throw new ApiError("not_found");
  return row;
}
