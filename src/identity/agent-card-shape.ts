/**
 * The shape half of A2A Agent Card verification (see agent-card.ts): which protocol version a
 * card speaks, and the fields that version requires, each problem reported with its path.
 */

export type CardVersion = "0.3" | "1.0";

export interface CardReason {
  code: string;
  message: string;
  path?: string;
}

export type Json = Record<string, unknown>;

export function isObject(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export function own(object: Json, name: string): unknown {
  return Object.hasOwn(object, name) ? object[name] : undefined;
}

// ---- Size ----------------------------------------------------------------------------------

/** Deeper than any real card (the A2A schema nests a few levels, extension params a few more). */
export const MAX_DEPTH = 32;
/** Skills, interfaces, modes, tags: real cards list a handful, never thousands. */
export const MAX_ARRAY = 1000;

type Node = { value: unknown; depth: number; parent: Node | null; step: string };

/**
 * The first place where the card is too deep or lists too much, or null. Iterative, so a
 * hostile nesting cannot exhaust the stack; everything after it may recurse and loop freely.
 */
export function sizeProblem(card: Json): CardReason | null {
  const stack: Node[] = [{ value: card, depth: 1, parent: null, step: "" }];
  while (stack.length > 0) {
    const node = stack.pop() as Node;
    const { value, depth } = node;
    if (typeof value !== "object" || value === null) continue;
    if (depth > MAX_DEPTH) {
      const message = `the card nests deeper than ${MAX_DEPTH} levels`;
      return { code: "too_deep", message, path: pathOf(node) };
    }
    if (Array.isArray(value)) {
      if (value.length > MAX_ARRAY) {
        const message = `a list of ${value.length} items; at most ${MAX_ARRAY} are accepted`;
        return { code: "too_large", message, path: pathOf(node) };
      }
      value.forEach((item, i) => {
        stack.push({ value: item, depth: depth + 1, parent: node, step: `[${i}]` });
      });
    } else {
      for (const [name, item] of Object.entries(value)) {
        stack.push({ value: item, depth: depth + 1, parent: node, step: `.${name}` });
      }
    }
  }
  return null;
}

function pathOf(node: Node): string {
  const steps: string[] = [];
  for (let at: Node | null = node; at; at = at.parent) steps.push(at.step);
  return steps.reverse().join("").replace(/^\./, "");
}

// ---- Version -------------------------------------------------------------------------------

const V03 = /^0\.3(\.\d+)?$/;
/** An interface of a 1.0 card may still speak 0.3 (`A2A-Version` is Major.Minor). */
const INTERFACE_VERSION = /^(0\.3|1\.0)(\.\d+)?$/;

type Detected = { version: CardVersion } | { reason: CardReason };

/** 0.3 cards say `protocolVersion`; 1.0 cards declare versions per supported interface. */
export function detectVersion(card: Json): Detected {
  const declared = own(card, "protocolVersion");
  if (declared !== undefined) {
    if (typeof declared === "string" && V03.test(declared)) return { version: "0.3" };
    return unsupported("protocolVersion", `protocolVersion ${JSON.stringify(declared)}`);
  }
  const interfaces = own(card, "supportedInterfaces");
  if (interfaces === undefined) {
    return {
      reason: {
        code: "unknown_version",
        message: "the card has neither a 0.3 protocolVersion nor 1.0 supportedInterfaces",
      },
    };
  }
  const versions = Array.isArray(interfaces)
    ? interfaces.map((i) => (isObject(i) ? own(i, "protocolVersion") : undefined))
    : [];
  const spoken = versions.filter((v): v is string => typeof v === "string");
  if (spoken.length > 0 && !spoken.some((v) => INTERFACE_VERSION.test(v))) {
    return unsupported("supportedInterfaces", `interface versions ${spoken.join(", ")}`);
  }
  return { version: "1.0" };
}

function unsupported(path: string, what: string): Detected {
  return {
    reason: {
      code: "unsupported_version",
      message: `${what} not supported: only A2A 0.3 and 1.0 cards are`,
      path,
    },
  };
}

// ---- Shape ---------------------------------------------------------------------------------

type Kind = "string" | "object" | "array" | "strings";
type Field = readonly [name: string, kind: Kind];

/** Space-separated field names, each a string unless written `name:kind`. */
function fields(spec: string): readonly Field[] {
  return spec.split(" ").map((entry) => {
    const [name = "", kind = "string"] = entry.split(":");
    return [name, kind as Kind] as const;
  });
}

const MODES_AND_SKILLS = "defaultInputModes:strings defaultOutputModes:strings skills:array";

const CARD_FIELDS: Record<CardVersion, readonly Field[]> = {
  "0.3": fields(
    `protocolVersion name description url version capabilities:object ${MODES_AND_SKILLS}`,
  ),
  "1.0": fields(
    `name description supportedInterfaces:array version capabilities:object ${MODES_AND_SKILLS}`,
  ),
};

const INTERFACE_FIELDS: Record<CardVersion, readonly Field[]> = {
  "0.3": fields("url transport"),
  "1.0": fields("url protocolBinding protocolVersion"),
};

const SKILL_FIELDS = fields("id name description tags:strings");
const PROVIDER_FIELDS = fields("organization url");

/** One reason per missing, ill-typed or (1.0) empty required field, each with its path. */
export function checkCardShape(card: Json, version: CardVersion): CardReason[] {
  // 1.0 §5.7: a REQUIRED array must hold at least one element. The 0.3 schema has no minItems.
  const shape = { nonEmpty: version === "1.0", reasons: [] as CardReason[] };
  checkFields(card, CARD_FIELDS[version], "", shape);
  checkItems(own(card, "skills"), "skills", SKILL_FIELDS, shape);
  const interfaces = interfaceList(version);
  if (version === "0.3") checkOptional(card, interfaces, "array", shape);
  checkItems(own(card, interfaces), interfaces, INTERFACE_FIELDS[version], shape);
  const provider = own(card, "provider");
  if (checkOptional(card, "provider", "object", shape) && isObject(provider)) {
    checkFields(provider, PROVIDER_FIELDS, "provider", shape);
  }
  checkUrls(card, version, shape.reasons);
  return shape.reasons;
}

type Shape = { nonEmpty: boolean; reasons: CardReason[] };

function checkFields(object: Json, required: readonly Field[], prefix: string, shape: Shape) {
  for (const [name, kind] of required) {
    const path = prefix ? `${prefix}.${name}` : name;
    const value = own(object, name);
    if (value === undefined || value === null) {
      shape.reasons.push({ code: "missing_field", message: `${path} is required`, path });
    } else if (!hasKind(value, kind)) {
      shape.reasons.push({ code: "wrong_type", message: `${path} must be ${KIND[kind]}`, path });
    } else if (Array.isArray(value)) {
      checkArray(value, kind, path, shape);
    }
  }
}

function checkArray(value: unknown[], kind: Kind, path: string, shape: Shape) {
  if (shape.nonEmpty && value.length === 0) {
    shape.reasons.push({ code: "empty_array", message: `${path} must not be empty`, path });
  }
  if (kind !== "strings") return;
  value.forEach((item, i) => {
    if (typeof item !== "string") {
      const at = `${path}[${i}]`;
      shape.reasons.push({ code: "wrong_type", message: `${at} must be a string`, path: at });
    }
  });
}

/** Present optional fields must still have their type; true when absent or well typed. */
function checkOptional(object: Json, name: string, kind: Kind, shape: Shape): boolean {
  const value = own(object, name);
  if (value === undefined || hasKind(value, kind)) return true;
  shape.reasons.push({ code: "wrong_type", message: `${name} must be ${KIND[kind]}`, path: name });
  return false;
}

function checkItems(list: unknown, path: string, required: readonly Field[], shape: Shape) {
  if (!Array.isArray(list)) return; // reported by the field check, or optional and absent
  list.forEach((item, i) => {
    const at = `${path}[${i}]`;
    if (isObject(item)) checkFields(item, required, at, shape);
    else shape.reasons.push({ code: "wrong_type", message: `${at} must be an object`, path: at });
  });
}

const KIND: Record<Kind, string> = {
  string: "a string",
  object: "an object",
  array: "an array",
  strings: "an array of strings",
};

function hasKind(value: unknown, kind: Kind): boolean {
  if (kind === "string") return typeof value === "string";
  if (kind === "object") return isObject(value);
  return Array.isArray(value);
}

/** Service urls must be absolute; whether one may be fetched is the outbound guard's call. */
function checkUrls(card: Json, version: CardVersion, reasons: CardReason[]) {
  const list = interfaceList(version);
  const urls: [string, unknown][] = version === "0.3" ? [["url", own(card, "url")]] : [];
  const interfaces = own(card, list);
  if (Array.isArray(interfaces)) {
    interfaces.forEach((item, i) => {
      if (isObject(item)) urls.push([`${list}[${i}].url`, own(item, "url")]);
    });
  }
  for (const [path, value] of urls) {
    if (typeof value === "string" && !isAbsoluteUrl(value)) {
      reasons.push({ code: "invalid_url", message: `${path} is not an absolute URL`, path });
    }
  }
}

function interfaceList(version: CardVersion) {
  // 0.3 lists extra transports beside its main `url`; 1.0 lists every endpoint.
  return version === "1.0" ? "supportedInterfaces" : "additionalInterfaces";
}

function isAbsoluteUrl(value: string): boolean {
  try {
    new URL(value);
    return true;
  } catch {
    return false;
  }
}
