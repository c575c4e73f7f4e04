import type { RouteConfig } from "@hono/zod-openapi";

type Security = NonNullable<RouteConfig["security"]>;

import { acceptedScopes, type ScopeRequirement } from "../auth/scopes";
import { type AuthorizeOptions, authorize } from "./authorize";
import { errorResponses } from "./schemas";

/**
 * Declares, in the one place a route is defined, the scope it needs: the middleware enforces
 * it and the OpenAPI document shows it.
 */
export function guarded<R extends Omit<RouteConfig, "middleware" | "security">>(
  scope: ScopeRequirement | null,
  route: R,
  options: AuthorizeOptions = {},
) {
  const accepted = scope === null ? [] : acceptedScopes(scope);
  const needs =
    accepted.length === 0
      ? "Requires any valid credential."
      : `Requires scope ${accepted.map((s) => `\`${s}\``).join(" or ")}.`;
  const who = options.sessionOnly
    ? " Session only."
    : options.liveOnly
      ? " Live keys and sessions only (a test key: 403 `live_key_required`)."
      : options.testOnly
        ? " Test mode only: a test key, or a session with `x-mode: test` (live mode: 400 `test_mode_only`)."
        : "";
  // The doors authorize counts (every write, and the assess and expensive limits) answer 429.
  const limited = route.method !== "get" || options.rateLimit !== undefined;
  return {
    ...route,
    responses: { ...route.responses, ...(limited ? errorResponses(429) : {}) },
    description: [route.description, `${needs}${who}`].filter(Boolean).join("\n\n"),
    middleware: [authorize(scope, options)],
    security: (options.sessionOnly
      ? [{ session: [] }]
      : [{ apiKey: [] }, { bearer: [] }]) as Security,
    "x-required-scope": scope,
    ...(options.liveOnly ? { "x-live-only": true } : {}),
    ...(options.testOnly ? { "x-test-only": true } : {}),
  };
}
