import { TrieRouter } from "hono/router/trie-router";
import type { RouterRoute } from "hono/types";
import { ApiError } from "../errors";

/** Middleware is registered for every method (`ALL`); only routes name the methods of a path. */
const ANY_METHOD = "ALL";

/**
 * The methods the app serves at a path, from its own route table (`app.routes`, what Hono
 * dispatches on), matched the way Hono matches them: a path parameter matches any segment, so
 * `/v1/agents/verify-card` also allows the methods of `/v1/agents/{id}`, which it reaches. HEAD
 * is allowed wherever GET is: Hono answers it with the GET route, without the body. Built at the
 * first request that needs it, when every route is registered.
 */
export function methodsOf(routes: readonly RouterRoute[]): (path: string) => string[] {
  let router: TrieRouter<string> | undefined;
  return (path) => {
    if (!router) {
      router = new TrieRouter<string>();
      for (const route of routes) {
        if (route.method !== ANY_METHOD) router.add(ANY_METHOD, route.path, route.method);
      }
    }
    const methods = new Set(router.match("GET", path)[0].map(([method]) => method));
    if (methods.has("GET")) methods.add("HEAD");
    return [...methods].sort();
  };
}

/** 405 `method_not_allowed` for a path the app serves with other methods (docs/api.md). */
export function methodNotAllowed(allowed: string[]): ApiError {
  return new ApiError(
    "method_not_allowed",
    { allowed },
    {
      message: `This path does not take this method: use ${allowed.join(", ")} (the Allow header).`,
    },
  );
}
