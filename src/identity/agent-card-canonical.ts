/**
 * The payloads an A2A 1.0 Agent Card signature can cover, each a JSON value serialized with
 * RFC 8785. Pure.
 *
 * - `specForm`: A2A 1.0 §8.4.1 with §5.7, applied field by field from a2a.proto
 *   (agent-card-proto.ts). A field holding its default ("", false, an empty list or map) is
 *   omitted unless it is REQUIRED or declared `optional`; a field that is present is taken as
 *   explicitly set, since JSON cannot say otherwise; a message field (and a oneof member) has
 *   presence in proto3, so it stays even when empty; `null` means not set. Values inside a
 *   list, a map or a Struct are kept as they are (proto serializes them all). Fields a2a.proto
 *   does not define are kept: §8.4.1 removes only default values, and a signature should cover
 *   what the card says.
 * - `sdkForm`: what `canonicalizeAgentCard` of @a2a-js/sdk 1.3.0 computes (a2a-python's
 *   `canonicalize_agent_card` takes the same steps): a round trip through the generated protobuf
 *   types, which keeps only fields a2a.proto defines (read under their JSON or proto name),
 *   keeps the first set member of a oneof and drops an implicit field at its default; then a
 *   pass that removes every "", null, empty list and empty object at any depth, REQUIRED and
 *   `optional` fields, map entries, list items and Struct contents included.
 *
 * A 1.0 signature verifies when it matches either form: real cards are signed by the SDKs, and
 * JSON cannot say whether an `optional` field at its default was explicitly set, which is where
 * §8.4.1 and the SDKs part. Where a known field holds a value of another JSON type than
 * a2a.proto gives it, both forms keep it as it is. The SDKs convert such a value (String(1),
 * Boolean("false") === true); a verifier that did the same would call a card verified for what
 * it does not say.
 */
import { canonicalize } from "#audit/canonical";
import { base64url } from "#audit/encoding";
import { isMessageType, PROTO, type ProtoField, type ProtoMessage } from "./agent-card-proto";
import { type CardVersion, isObject, type Json, own } from "./agent-card-shape";

/**
 * `spec`: the form the card's version specifies (0.3: the card as received; 1.0: §8.4.1).
 * `sdk`: 1.0 only, the official SDKs' form. `received`: a card of no known version, as received.
 */
export type CardForm = "spec" | "sdk" | "received";

export interface SigningPayload {
  form: CardForm;
  /** base64url of the RFC 8785 text: the detached JWS payload. */
  payload: string;
  /** Paths of the card this form leaves out (see sdkForm); empty for the other forms. */
  uncovered: string[];
}

export interface CardPayloads {
  /** The version whose rules made the forms. */
  version: CardVersion | null;
  /** What a signature may cover, in the order tried; empty when the card is not JSON. */
  forms: SigningPayload[];
  /** The card as received when it is none of `forms`: tried only to explain a failure. */
  received: string | null;
}

/** The payloads a signature of a card of this version may cover (without `signatures`). */
export function signingPayloads(card: Json, version: CardVersion | null): CardPayloads {
  const { signatures: _, ...unsigned } = card;
  const received = encode(unsigned);
  if (received === null) return { version, forms: [], received: null };
  if (version !== "1.0") {
    const form = version === "0.3" ? "spec" : "received";
    return { version, forms: [{ form, payload: received, uncovered: [] }], received: null };
  }
  const spec = encode(specForm(card)) as string;
  const sdk = sdkForm(card);
  const sdkPayload = encode(sdk.form) as string;
  const forms: SigningPayload[] = [{ form: "spec", payload: spec, uncovered: [] }];
  // Where the forms coincide, one verification answers for both, and the spec form is named.
  if (sdkPayload !== spec) {
    forms.push({ form: "sdk", payload: sdkPayload, uncovered: sdk.uncovered });
  }
  const asReceived = forms.some((f) => f.payload === received);
  return { version, forms, received: asReceived ? null : received };
}

function encode(value: unknown): string | null {
  try {
    return base64url(new TextEncoder().encode(canonicalize(value)));
  } catch {
    return null; // not JSON (a caller's non-finite number, a cycle): no payload to verify
  }
}

/** The card's §8.4.1 form, without `signatures`. */
export function specForm(card: Json): Json {
  const { signatures: _, ...unsigned } = card;
  return specMessage(unsigned, PROTO.AgentCard);
}

/**
 * The card as the official SDKs canonicalize it, without `signatures`, and the paths of what it
 * leaves out beyond fields left empty: fields a2a.proto does not define, oneof members after
 * the first, and map entries, list items and Struct members that are empty ("" or {}, a scheme
 * with no scopes). A signature over this form says nothing about those.
 */
export function sdkForm(card: Json): { form: Json; uncovered: string[] } {
  const { signatures: _, ...unsigned } = card;
  const uncovered: string[] = [];
  return { form: sdkMessage(unsigned, PROTO.AgentCard, "", uncovered) ?? {}, uncovered };
}

// ---- §8.4.1 ------------------------------------------------------------------------------

const OMIT = Symbol("omit");

function specMessage(object: Json, message: ProtoMessage): Json {
  const out: Json = {};
  for (const key of Object.keys(object)) {
    const field = message.byJson.get(key);
    const value = field ? specField(object[key], field) : object[key];
    if (value !== OMIT) put(out, key, value);
  }
  return out;
}

function specField(value: unknown, field: ProtoField): unknown {
  if (value === null || value === undefined) return OMIT;
  const kept = field.presence === "required";
  if (field.shape === "repeated") {
    if (!Array.isArray(value)) return value;
    if (value.length === 0 && !kept) return OMIT;
    return value.map((item) => specValue(item, field));
  }
  if (field.shape === "map") {
    if (!isObject(value)) return value;
    const keys = Object.keys(value);
    if (keys.length === 0 && !kept) return OMIT;
    const out: Json = {};
    for (const key of keys) put(out, key, specValue(value[key], field));
    return out;
  }
  if (kept || field.presence === "optional" || field.oneof) return specValue(value, field);
  if (field.type === "string") return value === "" ? OMIT : value;
  if (field.type === "bool") return value === false ? OMIT : value;
  return specValue(value, field); // a message or a Struct: present means set
}

function specValue(value: unknown, field: ProtoField): unknown {
  return isMessageType(field.type) && isObject(value)
    ? specMessage(value, PROTO[field.type])
    : value;
}

// ---- The SDKs ----------------------------------------------------------------------------
// The round trip and the SDKs' `cleanEmpty` in one bottom-up walk, so that what the emptiness
// pass removes can be told apart: a field left empty says nothing, but a map entry, a list item
// or a Struct member it removes is content the signature does not cover.

function sdkMessage(object: Json, message: ProtoMessage, path: string, uncovered: string[]) {
  const out: Json = {};
  const read = new Set<string>();
  let oneofSet = false;
  for (const field of message.fields) {
    // The generated fromJSON reads the JSON name, or the proto name when that is not set.
    const key = [field.json, field.proto].find((name) => isSet(own(object, name)));
    if (key === undefined || (field.oneof && oneofSet)) continue;
    oneofSet ||= field.oneof;
    read.add(key);
    const value = sdkField(object[key], field, join(path, key), uncovered);
    if (value !== undefined) put(out, field.json, value);
  }
  for (const key of Object.keys(object)) {
    if (!read.has(key)) uncovered.push(join(path, key));
  }
  return nonEmpty(out);
}

function sdkField(value: unknown, field: ProtoField, path: string, uncovered: string[]) {
  const item = (v: unknown, at: string) => sdkValue(v, field, at, uncovered);
  if (field.shape === "repeated" && Array.isArray(value)) {
    return kept(value, (v, i) => item(v, `${path}[${i}]`), path, uncovered);
  }
  if (field.shape === "map" && isObject(value)) {
    return members(value, (v, key) => item(v, join(path, key)), path, uncovered);
  }
  if (field.shape !== "single") return free(value, path, uncovered); // of another type
  // toJSON leaves out an implicit bool at false; "" and empty values go in the same pass.
  if (field.type === "bool" && field.presence === "implicit" && value === false) return undefined;
  return item(value, path);
}

function sdkValue(value: unknown, field: ProtoField, path: string, uncovered: string[]) {
  return isMessageType(field.type) && isObject(value)
    ? sdkMessage(value, PROTO[field.type], path, uncovered)
    : free(value, path, uncovered);
}

/** `cleanEmpty` over JSON a2a.proto does not describe: a Struct, or a value of another type. */
function free(value: unknown, path: string, uncovered: string[]): unknown {
  if (value === "" || value === null || value === undefined) return undefined;
  if (Array.isArray(value)) {
    return kept(value, (v, i) => free(v, `${path}[${i}]`, uncovered), path, uncovered);
  }
  if (!isObject(value)) return value;
  return members(value, (v, key) => free(v, join(path, key), uncovered), path, uncovered);
}

/** A list without the items that came out empty; undefined when none is left. */
function kept(
  list: unknown[],
  clean: (item: unknown, index: number) => unknown,
  path: string,
  uncovered: string[],
) {
  const out: unknown[] = [];
  list.forEach((item, i) => {
    const value = leftOut(uncovered, `${path}[${i}]`, () => clean(item, i));
    if (value !== undefined) out.push(value);
  });
  return out.length > 0 ? out : undefined;
}

/**
 * An object without the members that came out empty; undefined when none is left. The SDKs
 * build objects by assignment, where a key named `__proto__` sets the prototype instead of a
 * member, so such a key never reaches their payload either.
 */
function members(
  object: Json,
  clean: (value: unknown, key: string) => unknown,
  path: string,
  uncovered: string[],
) {
  const out: Json = {};
  for (const key of Object.keys(object)) {
    const cleaned = () => (key === "__proto__" ? undefined : clean(object[key], key));
    const value = leftOut(uncovered, join(path, key), cleaned);
    if (value !== undefined) put(out, key, value);
  }
  return nonEmpty(out);
}

/** Cleans one entry; when it comes out empty, its path alone stands for all left out in it. */
function leftOut(uncovered: string[], path: string, clean: () => unknown): unknown {
  const before = uncovered.length;
  const value = clean();
  if (value === undefined) uncovered.splice(before, Infinity, path);
  return value;
}

function nonEmpty(object: Json): Json | undefined {
  return Object.keys(object).length > 0 ? object : undefined;
}

/** The generated code's test for a set field. */
function isSet(value: unknown): boolean {
  return value !== null && value !== undefined;
}

function join(path: string, key: string): string {
  return path ? `${path}.${key}` : key;
}

/** An own member even when the key is `__proto__`, which plain assignment would not make. */
function put(object: Json, key: string, value: unknown) {
  Object.defineProperty(object, key, {
    value,
    enumerable: true,
    writable: true,
    configurable: true,
  });
}
