import type { Context, ErrorHandler, NotFoundHandler } from "hono";
import { HTTPException } from "hono/http-exception";
import type { RouterRoute } from "hono/types";
import type { ZodError } from "zod";
import type { Tenant } from "../auth/tenant";
import { isFailedAuthentication } from "../auth/unauthenticated";
import { isDatabaseUnavailable, sqlState } from "../db/client";
import { ApiError, type ErrorCode } from "../errors";
import { logError } from "../lib/log";
import { countFailure } from "./auth-failures";
import { setConsoleHeaders } from "./console-page";
import type { AppEnv } from "./context";
import { errorBody } from "./error-reference";
import { methodNotAllowed, methodsOf } from "./method-not-allowed";
import { clientIp } from "./rate-limit";

/** Every error answer of the service: the envelope, its status, and `Retry-After` for a 429. */
export function errorResponse(c: Context<AppEnv>, error: ApiError): Response {
  const headers =
    error.retryAfter === undefined ? undefined : { "retry-after": `${error.retryAfter}` };
  return c.json(errorBody(c.env, error), error.status, headers);
}

/** Zod issues as `details`: each failing path and what is wrong with it. */
export function issueDetails(error: ZodError): { path: string; message: string; code: string }[] {
  return error.issues.map((issue) => ({
    path: issue.path.map(String).join("."),
    message: issue.message,
    code: issue.code,
  }));
}

const statusCodes: Partial<Record<number, ErrorCode>> = {
  400: "invalid_json",
  401: "unauthenticated",
  404: "route_not_found",
  413: "request_too_large",
  415: "invalid_request",
};

function toApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  if (error instanceof HTTPException) {
    const code = statusCodes[error.status];
    if (code === "invalid_request") {
      return new ApiError(code, [{ path: "content-type", message: "must be application/json" }]);
    }
    if (code) return new ApiError(code);
  }
  if (isDatabaseUnavailable(error)) return new ApiError("database_unavailable");
  // Input the database cannot represent (a safety net behind validation): the caller's to fix.
  const state = sqlState(error);
  if (state === "22021" || state === "22P05" || state === "22P02") {
    return new ApiError("invalid_request", [{ path: "", message: "unrepresentable input" }]);
  }
  return new ApiError("internal_error");
}

/**
 * The one error handler. A client error on a route whose caller is not yet known is answered
 * only after the credential is checked, so 401 and 403 come before 400 as they should.
 */
export const onError: ErrorHandler<AppEnv> = async (err, c) => {
  let error = toApiError(err);
  // Unset on public routes and when the credential itself was refused.
  const tenant = c.get("tenant") as Tenant | undefined;
  // A 429 is answered without the database: the limit exists to spare it.
  const limited = error.code === "rate_limited";
  if (error.status < 500 && !limited && tenant && !tenant.established && !c.get("orgless")) {
    try {
      await tenant.caller();
    } catch (authError) {
      error = toApiError(authError);
    }
  }
  if (isFailedAuthentication(error)) {
    await countFailure(
      c.env,
      clientIp((name) => c.req.header(name)),
      tenant?.credential,
    );
  }
  if (error.status >= 500) {
    logError("request failed", {
      requestId: c.get("requestId"),
      code: error.code,
      error: err instanceof Error ? err.message : String(err),
      sqlstate: sqlState(err),
    });
  }
  return errorResponse(c, error);
};

/**
 * What no route answered: 405 with `Allow` for a path the app serves with other methods (from
 * its own route table, `routes`), else 404. A missing file under /console/ falls through the
 * static assets to here: it still gets the console's security headers (CSP, nosniff), like
 * every other console response.
 */
export function onNotFound(routes: readonly RouterRoute[]): NotFoundHandler<AppEnv> {
  const allowedAt = methodsOf(routes);
  return (c) => {
    const path = c.req.path;
    const allowed = allowedAt(path);
    // A route of this very method that answered nothing is no wrong method: that stays a 404.
    const wrongMethod = allowed.length > 0 && !allowed.includes(c.req.method);
    const response = wrongMethod
      ? errorResponse(c, methodNotAllowed(allowed))
      : errorResponse(c, new ApiError("route_not_found"));
    if (wrongMethod) response.headers.set("allow", allowed.join(", "));
    if (path === "/console" || path.startsWith("/console/")) setConsoleHeaders(response.headers);
    return response;
  };
}
