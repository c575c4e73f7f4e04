import type { MiddlewareHandler } from "hono";
import { caller } from "../db/tenant";
import { ApiError } from "../errors";
import type { AppEnv } from "../http/context";
import { errorResponse } from "../http/errors";
import { logError } from "../lib/log";
import { readCredential } from "./credential";
import type { ScopeRequirement } from "./scopes";

export interface AuthorizeOptions {
  /** Console routes that only a signed-in person may call (key management, org creation). */
  sessionOnly?: boolean;
  /** The route acts for the person, not yet for an org (creating one): a valid session is all. */
  orgless?: boolean;
}

/**
 * Route middleware: reads the credential and records the scope the route needs. The database
 * check happens in the route's first round trip (db/tenant.ts), so it costs no extra one.
 */
export function authorize(
  scope: ScopeRequirement | null,
  options: AuthorizeOptions = {},
): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const credential = await readCredential(c);
    if (options.sessionOnly && credential.kind !== "session") {
      // A revoked or unknown key is a 401 everywhere; only a valid key learns it needs a session.
      c.set("auth", { credential, scope: null, orgless: false });
      await caller(c);
      throw new ApiError("session_required");
    }
    c.set("auth", { credential, scope, orgless: options.orgless ?? false });
    await next();
    // Safety net: a route that answered success without ever establishing its caller skipped
    // authentication; never let that answer out.
    if (c.res.status < 400 && !c.get("auth")?.caller) {
      logError("route answered without a caller", { path: c.req.path });
      c.res = errorResponse(c, new ApiError("internal_error"));
    }
  };
}
