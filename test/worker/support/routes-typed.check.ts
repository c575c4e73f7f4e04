/**
 * The typed call's path matching, checked by the typecheck alone (`npm run check`): nothing
 * here runs. Each line fails to compile if the matching changes.
 */
import type { RouteOf } from "./routes-typed";

type Is<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type Holds<T extends true> = T;
declare const id: string;
declare function path<P extends string>(p: P): P;
type At<P extends string, M extends "GET" | "POST" | "PATCH" = "GET"> = RouteOf<P, M>;

const agent = path(`/v1/agents/${id}`);
const keys = path(`/v1/agents/${id}/keys?limit=2`);
const revoke = path(`/v1/agents/${id}/keys/${id}/revoke`);
const summary = path(`/v1/assessments/summary?from=${id}`);

export type Checks = [
  // A `{param}` takes one segment, and the query is not part of the path.
  Holds<Is<At<typeof agent>, "/v1/agents/{id}">>,
  Holds<Is<At<typeof keys>, "/v1/agents/{id}/keys">>,
  Holds<Is<At<typeof revoke, "POST">, "/v1/agents/{id}/keys/{keyId}/revoke">>,
  // A literal route wins over a `{param}` one.
  Holds<Is<At<"/v1/agents/verify-card", "POST">, "/v1/agents/verify-card">>,
  Holds<Is<At<typeof summary>, "/v1/assessments/summary">>,
  // An undocumented path or method, or a path known only as `string`, matches nothing.
  Holds<Is<At<"/openapi.json">, never>>,
  Holds<Is<At<`/v1/agents/${string}/nothing`>, never>>,
  Holds<Is<At<typeof agent, "POST">, never>>,
  Holds<Is<At<string>, never>>,
];
