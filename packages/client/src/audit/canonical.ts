/**
 * RFC 8785 JSON Canonicalization Scheme (JCS): the one serialization every ledger hash covers.
 *
 * JCS is defined in terms of ECMAScript's own JSON serialization, so the primitives are
 * delegated to JSON.stringify (Number::toString for numbers, -0 included; its string escaping,
 * which is exactly what JCS prescribes). Only the object key order and the refusal of
 * non-finite numbers are added here.
 *
 * JSON.stringify's handling of JavaScript-only values is kept (toJSON is called, `undefined`,
 * functions and symbols are dropped from objects and become null in arrays), so that
 * canonicalize(v) === canonicalize(JSON.parse(JSON.stringify(v))) for every v without
 * non-finite numbers: a payload hashes the same before and after a JSON round trip.
 */
export function canonicalize(value: unknown): string {
  const text = serialize(value, new Set());
  if (text === undefined) throw new TypeError("canonicalize: value has no JSON representation");
  return text;
}

function serialize(input: unknown, ancestors: Set<object>): string | undefined {
  const value = unwrap(input);
  switch (typeof value) {
    case "string":
      return JSON.stringify(value);
    case "number":
      // JSON.stringify would write null for these, silently changing the data that is hashed.
      if (!Number.isFinite(value)) throw new RangeError(`canonicalize: ${value} is not JSON`);
      return JSON.stringify(value);
    case "boolean":
      return value ? "true" : "false";
    case "bigint":
      throw new TypeError("canonicalize: BigInt is not JSON");
    case "undefined":
    case "function":
    case "symbol":
      return undefined;
  }
  if (value === null) return "null";
  const object = value as object;
  if (ancestors.has(object)) throw new TypeError("canonicalize: cyclic structure");
  ancestors.add(object);
  try {
    if (Array.isArray(object)) {
      const items: string[] = [];
      // An index loop, not map(): holes in sparse arrays must become null like JSON.stringify.
      for (let i = 0; i < object.length; i++) items.push(serialize(object[i], ancestors) ?? "null");
      return `[${items.join(",")}]`;
    }
    const members: string[] = [];
    // Array.prototype.sort without a comparator orders by UTF-16 code units: RFC 8785 §3.2.3.
    for (const key of Object.keys(object).sort()) {
      const member = serialize((object as Record<string, unknown>)[key], ancestors);
      if (member !== undefined) members.push(`${JSON.stringify(key)}:${member}`);
    }
    return `{${members.join(",")}}`;
  } finally {
    ancestors.delete(object);
  }
}

/** What JSON.stringify would serialize in place of `value`: toJSON(), then boxed primitives. */
function unwrap(value: unknown): unknown {
  if (value === null || typeof value !== "object") return value;
  const toJSON = (value as { toJSON?: unknown }).toJSON;
  const replaced: unknown = typeof toJSON === "function" ? toJSON.call(value) : value;
  if (replaced instanceof Number || replaced instanceof String || replaced instanceof Boolean) {
    return replaced.valueOf();
  }
  return replaced;
}
