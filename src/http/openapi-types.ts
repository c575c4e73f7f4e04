/**
 * States the `type` of every `anyOf` / `oneOf` / `allOf` schema whose members state theirs: a
 * discriminated union of objects becomes `type: "object"` beside its `oneOf`, a nullable
 * reference `type: ["object", "null"]` beside its `anyOf`. The members already say it, so
 * nothing a body may be changes; but the reference's renderer (Scalar) checks each schema
 * against its own model, which wants a `type` (or its internal marker) on every schema, and
 * logs "document validation errors" naming each schema without one (docs/reference.md).
 *
 * Done on the document, not in each zod schema's `.openapi()` metadata: the generator takes a
 * `type` in the metadata as the whole schema and drops the union it was given.
 */

type Node = Record<string, unknown>;
type Components = { schemas?: Record<string, unknown> };

const REF = "#/components/schemas/";

function isNode(value: unknown): value is Node {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The types a schema admits, when it says them (itself, its members or what it references). */
function typesOf(
  schema: unknown,
  components: Components,
  seen: ReadonlySet<string>,
): string[] | null {
  if (!isNode(schema)) return null;
  if (typeof schema.$ref === "string" && schema.$ref.startsWith(REF)) {
    const name = schema.$ref.slice(REF.length);
    if (seen.has(name)) return null;
    return typesOf(components.schemas?.[name], components, new Set([...seen, name]));
  }
  if (typeof schema.type === "string") return [schema.type];
  if (Array.isArray(schema.type)) return schema.type.filter((t) => typeof t === "string");
  if (Array.isArray(schema.allOf)) {
    // Every member holds: the types are those the members that say theirs all admit.
    let common: string[] | null = null;
    for (const member of schema.allOf) {
      const found = typesOf(member, components, seen);
      if (found !== null)
        common = common === null ? found : common.filter((t) => found.includes(t));
    }
    return common !== null && common.length > 0 ? common : null;
  }
  const members = schema.anyOf ?? schema.oneOf;
  if (!Array.isArray(members) || members.length === 0) return null;
  const types = new Set<string>();
  for (const member of members) {
    const found = typesOf(member, components, seen);
    if (found === null) return null;
    for (const type of found) types.add(type);
  }
  return [...types];
}

/** Objects, or null: a union the client generator still types exactly with the `type` added. */
function objects(types: string[]): boolean {
  return types.every((type) => type === "object" || type === "null");
}

/**
 * A union of inline scalars (`string | number | boolean`). Not one with a member referenced
 * (a `$ref` to an enum would widen to `string` in the generated client) or an array.
 */
function scalars(schema: Node): boolean {
  const members = schema.anyOf ?? schema.oneOf;
  return (
    Array.isArray(members) &&
    members.every(
      (member) =>
        isNode(member) &&
        member.$ref === undefined &&
        ["string", "number", "integer", "boolean", "array"].includes(member.type as string),
    )
  );
}

/** Adds the `type` in place, everywhere in `document` (paths and components). */
export function withUnionTypes<D extends { components?: Components }>(document: D): D {
  const components = document.components ?? {};
  const visit = (value: unknown) => {
    if (Array.isArray(value)) {
      for (const item of value) visit(item);
      return;
    }
    if (!isNode(value)) return;
    if (
      value.type === undefined &&
      value.$ref === undefined &&
      (value.anyOf || value.oneOf || value.allOf)
    ) {
      const types = typesOf(value, components, new Set());
      if (types !== null && types.length > 0 && (objects(types) || scalars(value))) {
        value.type = types.length === 1 ? types[0] : types;
      }
    }
    for (const [key, child] of Object.entries(value)) {
      // Examples are instances, not schemas.
      if (key !== "example" && key !== "examples") visit(child);
    }
  };
  visit(document);
  return document;
}
