import type { components } from "./generated/openapi.js";

/** The service's error codes, as its OpenAPI document lists them. */
export type ErrorCode = components["schemas"]["ErrorResponse"]["error"];

/**
 * A non-2xx answer, thrown by every client call (as Stripe's client throws): `status` is the
 * HTTP status, `error` the service's machine-readable code, `details` what it says about the
 * failing input. A body that is not the service's envelope (a proxy's 502 page) keeps its
 * status with `error: "unexpected_response"`.
 */
export class ApiError extends Error {
  override readonly name = "ApiError";

  constructor(
    readonly status: number,
    readonly error: ErrorCode | "unexpected_response",
    readonly details: unknown,
    /** Seconds the service asked to wait (`Retry-After`), when it did. */
    readonly retryAfter: number | undefined,
  ) {
    super(`${status} ${error}`);
  }

  /** The error for a failed response whose body was already read (`body`: parsed or text). */
  static of(response: Response, body: unknown): ApiError {
    const envelope = body as { error?: unknown; details?: unknown } | undefined;
    const code = typeof envelope?.error === "string" ? (envelope.error as ErrorCode) : undefined;
    return new ApiError(
      response.status,
      code ?? "unexpected_response",
      code ? envelope?.details : body,
      retryAfterSeconds(response.headers.get("retry-after")),
    );
  }
}

/** `Retry-After` as seconds from now: delta-seconds or an HTTP date; undefined when absent. */
export function retryAfterSeconds(value: string | null, now = Date.now()): number | undefined {
  if (value === null || value.trim() === "") return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - now) / 1000));
}
