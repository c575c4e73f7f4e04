import { env } from "cloudflare:test";
import { type Refusal, refusals } from "../../../src/auth/unauthenticated";
import { type ErrorCode, errorMessages } from "../../../src/errors";

/**
 * The exact error envelope the service answers with `code`: its message from the table (or
 * the one given, where the call site says more), `details` when there are any, and `doc_url`,
 * the code's entry in the reference under the suite's PUBLIC_BASE_URL (vitest.config.ts).
 */
export function errorBody(
  code: ErrorCode,
  details?: unknown,
  message: string = errorMessages[code],
): Record<string, unknown> {
  return {
    error: code,
    message,
    ...(details === undefined ? {} : { details }),
    doc_url: `${env.PUBLIC_BASE_URL}/docs#description/${code}`,
  };
}

/** A 401 for one of the ways a credential is refused (src/auth/unauthenticated.ts). */
export function refusedBody(refusal: Refusal): Record<string, unknown> {
  const { reason, message } = refusals[refusal];
  return errorBody("unauthenticated", { reason }, message);
}
