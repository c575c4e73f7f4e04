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
  const text = serialize(value, []);
  if (text === undefined) throw new TypeError("canonicalize: value has no JSON representation");
  return text;
}

// Every assessment canonicalizes its mandate and its record: the text is built in place and the
// ancestors (for the cycle check) are a stack a few levels deep, not a Set and joined arrays.
function serialize(input: unknown, ancestors: object[]): string | undefined {
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
  if (ancestors.includes(object)) throw new TypeError("canonicalize: cyclic structure");
  ancestors.push(object);
  let text: string;
  if (Array.isArray(object)) {
    text = "[";
    // An index loop, not map(): holes in sparse arrays must become null like JSON.stringify.
    for (let i = 0; i < object.length; i++) {
      text += `${i === 0 ? "" : ","}${serialize(object[i], ancestors) ?? "null"}`;
    }
    text += "]";
  } else {
    text = "{";
    // Array.prototype.sort without a comparator orders by UTF-16 code units: RFC 8785 §3.2.3.
    for (const key of Object.keys(object).sort()) {
      const member = serialize((object as Record<string, unknown>)[key], ancestors);
      if (member === undefined) continue;
      text += `${text.length === 1 ? "" : ","}${JSON.stringify(key)}:${member}`;
    }
    text += "}";
  }
  // A throw above abandons the whole call, so the stack needs no unwinding on that path.
  ancestors.pop();
  return text;
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
