import { Validator } from "@cfworker/json-schema";

// The rules that make /openapi.json the whole contract, checked against the app that serves it
// (docs/api.md, "The OpenAPI document"). Plain functions over the rendered JSON, so the node
// tests and the worker tests share them; the validator runs without code generation, which
// workerd forbids.

type Json = Record<string, any>;

/** What the rules tolerate, each entry named exactly and kept in the test that uses it. */
export interface ContractExceptions {
  /** Routes the app serves that are not API operations (`GET /openapi.json` itself). */
  undocumented: string[];
  /** Writes that take no body (`POST /v1/api-keys/{id}/revoke`). */
  bodyless: string[];
  /**
   * Places where the API really accepts or answers any JSON object (a mandate as submitted, a
   * JWK), as `<Component>.<property path>` or `<METHOD path> <status> <media type>`.
   */
  freeForm: string[];
}

const WRITES = new Set(["post", "put", "patch"]);
const METHODS = new Set(["get", "post", "put", "patch", "delete"]);

/** The app's own routes as `METHOD /path/{param}`, middleware left out. */
export function servedRoutes(routes: { method: string; path: string }[]): string[] {
  const served = routes
    .filter((route) => METHODS.has(route.method.toLowerCase()))
    .map((route) => `${route.method} ${route.path.replaceAll(/:(\w+)/g, "{$1}")}`);
  return [...new Set(served)].sort();
}

function operations(document: Json): { name: string; operation: Json; path: string }[] {
  return Object.entries<Json>(document.paths ?? {}).flatMap(([path, item]) =>
    Object.entries<Json>(item)
      .filter(([method]) => METHODS.has(method))
      .map(([method, operation]) => ({ name: `${method.toUpperCase()} ${path}`, operation, path })),
  );
}

function componentOf(document: Json, ref: string): Json | undefined {
  const match = /^#\/components\/schemas\/(.+)$/.exec(ref);
  return match ? document.components?.schemas?.[match[1] as string] : undefined;
}

/**
 * `{ type: object }` with nothing said about its members: any object at all. A composition
 * (`anyOf`, `oneOf`, `allOf`) says it through its members, which are checked on their own.
 */
function isFreeForm(schema: Json): boolean {
  const types = [schema.type].flat();
  if (!types.includes("object") || schema.properties || schema.$ref) return false;
  if (schema.anyOf || schema.oneOf || schema.allOf) return false;
  const extra = schema.additionalProperties;
  return extra === undefined || extra === true || (isObject(extra) && !hasShape(extra));
}

function hasShape(schema: Json): boolean {
  return Object.keys(schema).some((key) => key !== "description");
}

function isObject(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Every free-form object inside `schema`, as `<base>.<path>` (the path without `properties`). */
function freeFormsIn(schema: unknown, base: string, found: string[] = []): string[] {
  if (Array.isArray(schema)) {
    for (const item of schema) freeFormsIn(item, base, found);
    return found;
  }
  if (!isObject(schema)) return found;
  if (isFreeForm(schema)) found.push(base);
  for (const [key, value] of Object.entries(schema)) {
    if (key === "properties" && isObject(value)) {
      for (const [name, member] of Object.entries(value)) {
        freeFormsIn(member, `${base}.${name}`, found);
      }
    } else if (key === "items" || key === "additionalProperties") {
      freeFormsIn(value, `${base}[]`, found);
    } else if (key === "anyOf" || key === "oneOf" || key === "allOf") {
      freeFormsIn(value, base, found);
    }
  }
  return found;
}

/** A validator of `schema` with the document's components in reach of its `$ref`s. */
export function schemaValidator(document: Json, schema: Json): Validator {
  const components = withoutExamples(document.components) as Json;
  return new Validator({ ...schema, components }, "2020-12", false);
}

/**
 * The schemas without their examples: the validator indexes every `id` it walks as a schema
 * id, examples' members included (two examples naming one payee would collide).
 */
function withoutExamples(node: unknown, inProperties = false): unknown {
  if (Array.isArray(node)) return node.map((item) => withoutExamples(item));
  if (!isObject(node)) return node;
  return Object.fromEntries(
    Object.entries(node)
      .filter(([key]) => inProperties || (key !== "example" && key !== "examples"))
      .map(([key, value]) => [key, withoutExamples(value, key === "properties" && !inProperties)]),
  );
}

/** The errors of `value` against `schema`, one line each (empty when it is valid). */
export function schemaErrors(document: Json, schema: Json, value: unknown): string[] {
  const { errors } = schemaValidator(document, schema).validate(value);
  // The innermost errors only: each failing member also fails its parents.
  const inner = errors.filter(
    (error) =>
      !errors.some((other) => other.instanceLocation.startsWith(`${error.instanceLocation}/`)),
  );
  return [...new Set(inner.map((error) => `${error.instanceLocation}: ${error.error}`))];
}

/**
 * Every way the document falls short of the contract, one message each, naming the operation
 * and what to fix. Empty when the document is complete.
 */
export function contractViolations(
  document: Json,
  served: string[],
  exceptions: ContractExceptions,
): string[] {
  const problems: string[] = [];
  const documented = new Set(operations(document).map((o) => o.name));
  for (const route of served) {
    if (!documented.has(route) && !exceptions.undocumented.includes(route)) {
      problems.push(`${route}: served but not in the document (define it with createRoute)`);
    }
  }
  for (const { name, operation, path } of operations(document)) {
    problems.push(...operationViolations(document, name, operation, path, exceptions));
  }
  for (const [component, schema] of Object.entries<Json>(document.components?.schemas ?? {})) {
    for (const place of freeFormsIn(schema, component)) {
      if (!exceptions.freeForm.includes(place)) {
        problems.push(`${place}: a free-form object; give it a schema (or list it as free-form)`);
      }
    }
  }
  return problems;
}

function operationViolations(
  document: Json,
  name: string,
  operation: Json,
  path: string,
  exceptions: ContractExceptions,
): string[] {
  const problems: string[] = [];
  const method = name.split(" ")[0]?.toLowerCase() ?? "";
  if (!operation.summary) problems.push(`${name}: no summary`);
  problems.push(...parameterViolations(name, operation, path));

  const body = operation.requestBody;
  if (WRITES.has(method) && !body && !exceptions.bodyless.includes(name)) {
    problems.push(`${name}: a write without a requestBody (document its body schema)`);
  }
  if (body) {
    for (const [type, media] of Object.entries<Json>(body.content ?? {})) {
      const where = `${name} request ${type}`;
      problems.push(...mediaViolations(document, where, media, exceptions));
    }
  }

  const responses = Object.entries<Json>(operation.responses ?? {});
  if (!responses.some(([status]) => status.startsWith("2"))) {
    problems.push(`${name}: no success response`);
  }
  for (const [status, response] of responses) {
    const content = Object.entries<Json>(response.content ?? {});
    if (content.length === 0 && status !== "204") {
      problems.push(`${name} ${status}: a response without content`);
    }
    for (const [type, media] of content) {
      const where = `${name} ${status} ${type}`;
      problems.push(...mediaViolations(document, where, media, exceptions));
      const error = !status.startsWith("2");
      if (error && media.schema?.$ref !== "#/components/schemas/ErrorResponse") {
        problems.push(`${where}: an error answers the ErrorResponse envelope`);
      }
      if (!error && media.example === undefined) {
        problems.push(`${where}: no example`);
      }
    }
  }
  if (body && Object.values<Json>(body.content ?? {}).some((media) => !("example" in media))) {
    problems.push(`${name} request: no example`);
  }
  return problems;
}

function parameterViolations(name: string, operation: Json, path: string): string[] {
  const problems: string[] = [];
  const parameters = (operation.parameters ?? []) as Json[];
  for (const parameter of parameters) {
    const schema = parameter.schema ?? {};
    if (!schema.type && !schema.$ref && !schema.enum && !schema.anyOf) {
      problems.push(`${name} parameter ${parameter.name}: untyped`);
    }
  }
  for (const [, param] of path.matchAll(/\{(\w+)\}/g)) {
    if (!parameters.some((p) => p.in === "path" && p.name === param)) {
      problems.push(`${name}: path parameter ${param} not declared (request.params)`);
    }
  }
  return problems;
}

/**
 * A body's schema is a named component (a stable name for generated clients), or, in a
 * media type other than JSON, a described string; its example is valid against it.
 */
function mediaViolations(
  document: Json,
  where: string,
  media: Json,
  exceptions: ContractExceptions,
): string[] {
  const schema = media.schema as Json | undefined;
  if (!schema) return [`${where}: no schema`];
  const problems: string[] = [];
  const freeFormAllowed = exceptions.freeForm.includes(where);
  if (schema.$ref) {
    if (!componentOf(document, schema.$ref)) problems.push(`${where}: ${schema.$ref} is missing`);
  } else if (!freeFormAllowed) {
    problems.push(`${where}: an inline schema; name it with .openapi("Name")`);
  }
  if (media.example !== undefined) {
    for (const error of schemaErrors(document, schema, media.example)) {
      problems.push(`${where}: the example is invalid: ${error}`);
    }
  }
  return problems;
}

/**
 * The document with every object closed to members it does not name (`unevaluatedProperties:
 * false`), so a response carrying an undocumented field fails validation against it. A
 * component another one extends (an `allOf` member) stays open: closing it would refuse the
 * extension's own members.
 */
export function closedDocument(document: Json): Json {
  const extended = new Set<string>();
  const findExtended = (node: unknown): void => {
    if (typeof node !== "object" || node === null) return;
    const members = Array.isArray(node) ? [] : ((node as Json).allOf ?? []);
    for (const member of members as Json[]) {
      if (typeof member.$ref === "string") extended.add(member.$ref);
    }
    for (const value of Object.values(node)) findExtended(value);
  };
  findExtended(document.components);
  // An allOf member stays open (its siblings name the rest); the allOf itself is closed.
  const close = (node: unknown, member = false): unknown => {
    if (Array.isArray(node)) return node.map((item) => close(item, member));
    if (!isObject(node)) return node;
    const copy = Object.fromEntries(
      Object.entries(node).map(([key, value]) => [key, close(value, key === "allOf")]),
    );
    const open = "additionalProperties" in node || "unevaluatedProperties" in node;
    if ((node.properties || node.allOf) && !open && !member) copy.unevaluatedProperties = false;
    return copy;
  };
  const schemas = Object.fromEntries(
    Object.entries<Json>(document.components?.schemas ?? {}).map(([name, schema]) => [
      name,
      extended.has(`#/components/schemas/${name}`) ? schema : close(schema),
    ]),
  );
  return { ...document, components: { ...document.components, schemas } };
}
