/**
 * The worker tests' calls typed by the OpenAPI document (packages/client's generated `paths`):
 * a concrete path such as `/v1/agents/${id}/keys?limit=2` is matched against the document's
 * templates (`/v1/agents/{id}/keys`, as the pattern `/v1/agents/${string}/keys` with as many
 * segments), so a changed response or request shape in the document fails the typecheck where
 * a test reads or sends it. routes-typed.check.ts holds the matching to its examples.
 */
import type { components, paths } from "../../../packages/client/src/generated/openapi";

export type Method = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
type Template = keyof paths;

type WithoutQuery<S extends string> = S extends `${infer Path}?${string}` ? Path : S;
type Segments<S extends string> = S extends `${infer Head}/${infer Tail}`
  ? [Head, ...Segments<Tail>]
  : [S];
/** A template as a template literal type: `/v1/agents/{id}/keys` → `/v1/agents/${string}/keys`. */
type Pattern<S extends string> = S extends `${infer Before}{${string}}${infer After}`
  ? `${Before}${string}${Pattern<After>}`
  : S;
/** Each template's pattern and its number of segments (a pattern's `${string}` also takes `/`). */
type Templates = { [T in Template]: { pattern: Pattern<T>; depth: Segments<T>["length"] } };

type Operation<T extends Template, M extends Method> = NonNullable<paths[T][Lowercase<M>]>;
type HasMethod<T extends Template, M extends Method> = [Operation<T, M>] extends [never]
  ? false
  : true;

/**
 * The document's template for a concrete path and method: the path itself when it is a
 * template (a literal route wins over `{param}`), else every template whose pattern it matches
 * with as many segments; `never` when none does, or when the path is only known as `string`.
 */
export type RouteOf<P extends string, M extends Method> = string extends P
  ? never
  : WithoutQuery<P> extends infer Path extends string
    ? Path extends Template
      ? HasMethod<Path, M> extends true
        ? Path
        : never
      : {
          [T in Template]: Path extends Templates[T]["pattern"]
            ? Segments<Path>["length"] extends Templates[T]["depth"]
              ? HasMethod<T, M> extends true
                ? T
                : never
              : never
            : never;
        }[Template]
    : never;

/**
 * The path argument: itself when it names a documented route, else a type no string has, which
 * shows this sentence in the compiler's message. (A conditional rather than an intersection, so
 * that a template literal argument keeps its template type, `/v1/agents/${string}`.)
 */
export type Documented<P extends string, M extends Method> = [RouteOf<P, M>] extends [never]
  ? { "no route in the OpenAPI document has this path and method: use callRaw": P }
  : P;

type Json<R> = R extends { content: { "application/json": infer Body } } ? Body : undefined;
type SuccessStatus = 200 | 201 | 202 | 203 | 204 | 206;
type Responses<T extends Template, M extends Method> = Operation<T, M>["responses"];

/**
 * The JSON body of the route's 2xx answers (undefined where they carry none); for a helper
 * whose method is a union (`"POST" | "DELETE"`), any of theirs.
 */
export type SuccessBody<T extends Template, M extends Method> = [T] extends [never]
  ? any
  : M extends Method
    ? {
        [S in keyof Responses<T, M>]: S extends SuccessStatus ? Json<Responses<T, M>[S]> : never;
      }[keyof Responses<T, M>]
    : never;

/** The JSON request body the route declares (never where it declares none). */
export type RequestBody<T extends Template, M extends Method> = [T] extends [never]
  ? unknown
  : Operation<T, M> extends { requestBody?: { content: { "application/json": infer Body } } }
    ? Body
    : never;

/**
 * The error envelope (ErrorResponse). The document leaves `details` open (`unknown`); the tests
 * read into it (validation issues' `path`, a chain break's `head`), so here it is `any`.
 */
export type ErrorBody = Omit<components["schemas"]["ErrorResponse"], "details"> & {
  details?: any;
};

interface Credentials {
  key?: string;
  token?: string;
  headers?: Record<string, string>;
}

/**
 * A call's options: the body is the route's request schema, unless `raw: true` says the test
 * sends what the schema would refuse (a hostile, malformed or partial body, or raw text).
 */
export type CallOptions<T extends Template, M extends Method> = Credentials & { method?: M } & (
    | { raw?: false; body?: RequestBody<T, M> }
    | { raw: true; body?: unknown }
  );
