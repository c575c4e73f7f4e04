import type { components } from "./generated/openapi.js";

/** The service's error codes, as its OpenAPI document lists them. */
export type ErrorCode = components["schemas"]["ErrorResponse"]["error"];

/**
 * A non-2xx answer, thrown by every client call (as Stripe's client throws): `status` is the
 * HTTP status, `error` the service's machine-readable code (match on it), `details` what it
 * says about the failing input, `message` its sentence for a person and `doc_url` the code's
 * entry in the service's API reference. A body that is not the service's envelope (a proxy's
 * 502 page) keeps its status with `error: "unexpected_response"`, the text in `details` and
 * `message` `"<status> unexpected_response"`.
 */
export class ApiError extends Error {
  override readonly name = "ApiError";

  constructor(
    readonly status: number,
    readonly error: ErrorCode | "unexpected_response",
    readonly details: unknown,
    /** Seconds the service asked to wait (`Retry-After`), when it did. */
    readonly retryAfter: number | undefined,
    message?: string,
    /** The code's entry in the service's API reference (`…/docs#…`), when it gave one. */
    readonly doc_url?: string,
  ) {
    super(message ?? `${status} ${error}`);
  }

  /** The error for a failed response whose body was already read (`body`: parsed or text). */
  static of(response: Response, body: unknown): ApiError {
    const envelope = body as
      | { error?: unknown; details?: unknown; message?: unknown; doc_url?: unknown }
      | undefined;
    const code = typeof envelope?.error === "string" ? (envelope.error as ErrorCode) : undefined;
    const text = (value: unknown) => (code && typeof value === "string" ? value : undefined);
    return new ApiError(
      response.status,
      code ?? "unexpected_response",
      code ? envelope?.details : body,
      retryAfterSeconds(response.headers.get("retry-after")),
      text(envelope?.message),
      text(envelope?.doc_url),
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
