import type { MiddlewareHandler } from "hono";
import { checkRequestedMode, readCredential } from "../auth/credential";
import type { ScopeRequirement } from "../auth/scopes";
import { type Defer, Tenant } from "../auth/tenant";
import { ApiError } from "../errors";
import { logError } from "../lib/log";
import { refuseBlocked } from "./auth-failures";
import type { AppContext, AppEnv } from "./context";
import { errorResponse } from "./errors";
import { clientIp, credentialKey, enforceRateLimit } from "./rate-limit";

export interface AuthorizeOptions {
  /** Console routes that only a signed-in person may call (key management, org creation). */
  sessionOnly?: boolean;
  /** The route acts for the person, not yet for an org (creating one): a valid session is all. */
  orgless?: boolean;
  /**
   * The route changes configuration or authority that live and test mode share: a test key is
   * refused with 403 `live_key_required` (after its 401 and scope checks, as every 4xx).
   */
  liveOnly?: boolean;
  /**
   * The route reads or changes what exists only in test mode (test clocks): a request in live
   * mode, a live key or a session without `x-mode: test`, is refused with 400 `test_mode_only`
   * (after its 401 and scope checks, as every 4xx). The mirror of `liveOnly`, except that a
   * session is held to its mode too: it does not act on shared configuration here.
   */
  testOnly?: boolean;
  /**
   * The limit the route counts against besides the per-credential one of every write:
   * `assess` replaces it for `POST /v1/assess`; `expensive` adds a per-org limit (the caller is
   * established first, one round trip, on routes that cost far more).
   */
  rateLimit?: "assess" | "expensive";
}

/** The Worker's `waitUntil`; a direct `app.fetch` without an execution context just runs it. */
function deferOf(c: AppContext): Defer {
  return (work) => {
    try {
      c.executionCtx.waitUntil(work);
    } catch {
      // No execution context (a direct call in a test): the promise still runs to completion.
    }
  };
}

/**
 * Route middleware, the request's init: reads the credential and builds the request's tenant
 * with the scope the route needs. The database check happens in the route's first round trip
 * (Tenant.batch), so it costs no extra one.
 */
export function authorize(
  scope: ScopeRequirement | null,
  options: AuthorizeOptions = {},
): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    // A client, or a key, past the failed-authentication limit: refused before any lookup.
    const ip = clientIp((name) => c.req.header(name));
    refuseBlocked(ip);
    const credential = await readCredential((name) => c.req.header(name), c.env);
    refuseBlocked(ip, credential);
    if (options.sessionOnly && credential.kind !== "session") {
      // A revoked or unknown key is a 401 everywhere; only a valid key learns it needs a session.
      await new Tenant(c.env, credential, null, deferOf(c)).caller();
      throw new ApiError("session_required");
    }
    const tenant = new Tenant(c.env, credential, scope, deferOf(c));
    c.set("tenant", tenant);
    c.set("orgless", options.orgless ?? false);
    // Only now, with the tenant set: a 400 here reaches the error handler, which checks the
    // credential first, so a revoked key with a wrong x-mode is the 401 it is.
    checkRequestedMode(credential, (name) => c.req.header(name));
    if (options.rateLimit === "assess") {
      await enforceRateLimit(c.env, "assess", credentialKey(credential));
    } else if (c.req.method !== "GET") {
      await enforceRateLimit(c.env, "write", credentialKey(credential));
    }
    // A test key only: a session in test mode is a person, who changes shared configuration
    // whichever mode the console shows (docs/console.md, "Test mode").
    if (options.liveOnly && credential.kind === "api_key" && !credential.livemode) {
      throw new ApiError("live_key_required", [
        {
          path: "",
          message: "this changes what live and test mode share: use a live key or a session",
        },
      ]);
    }
    // A session too: a test clock is test-mode data, not configuration both modes share.
    if (options.testOnly && credential.livemode) {
      throw new ApiError("test_mode_only", [
        {
          path: "",
          message:
            "test clocks exist only in test mode: use a test key, or a session with x-mode: test",
        },
      ]);
    }
    if (options.rateLimit === "expensive") {
      await enforceRateLimit(c.env, "expensive", (await tenant.caller()).orgId);
    }
    await next();
    // Safety net: a route that answered success without ever establishing its caller skipped
    // authentication; never let that answer out.
    if (c.res.status < 400 && !tenant.established) {
      logError("route answered without a caller", { path: c.req.path });
      c.res = errorResponse(c, new ApiError("internal_error"));
    }
  };
}
