import { ApiError } from "../errors";

/**
 * Every way a credential is refused with 401 `unauthenticated`: `details.reason` (the closed set
 * the reference documents) and the sentence that tells the caller what to fix. A revoked key and
 * a key that was never issued are one case, `unknown_key`: the answer never says whether a key
 * existed.
 */
export const refusals = {
  missing: {
    reason: "missing",
    message:
      "No credential was sent: send an API key as x-api-key (or Authorization: Bearer), or a session token as Authorization: Bearer.",
  },
  malformed_key: {
    reason: "malformed",
    message:
      "The API key is malformed: a key is aar_live_ or aar_test_ followed by 43 characters; check that it was copied whole.",
  },
  not_bearer: {
    reason: "malformed",
    message:
      "The Authorization header is not a Bearer credential: send Authorization: Bearer followed by an API key or a session token.",
  },
  malformed_session: {
    reason: "malformed",
    message: "The session token is malformed: send the JWT the identity provider issued, whole.",
  },
  unknown_key: {
    reason: "unknown",
    message: "The API key is not valid: it may have been revoked or mistyped.",
  },
  unknown_session: {
    reason: "unknown",
    message: "The session token is not valid for this service: sign in again.",
  },
  expired_session: {
    reason: "expired",
    message: "The session has expired: sign in again.",
  },
} as const satisfies Record<string, { reason: string; message: string }>;

export type Refusal = keyof typeof refusals;

/**
 * A credential was presented and refused (malformed or unknown): what the failed-authentication
 * limit counts (src/http/auth-failures.ts). Not a request without one (a signed-out browser's
 * first call), nor a genuine session past its expiry (a person who should sign in again).
 */
export function isFailedAuthentication(error: ApiError): boolean {
  if (error.code !== "unauthenticated") return false;
  const reason = (error.details as { reason?: string } | undefined)?.reason;
  return reason === refusals.malformed_key.reason || reason === refusals.unknown_key.reason;
}

export function unauthenticated(refusal: Refusal, cause?: unknown): ApiError {
  const { reason, message } = refusals[refusal];
  return new ApiError("unauthenticated", { reason }, { message, cause });
}
