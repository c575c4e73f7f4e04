import { ApiError } from "../../errors";
import type { HttpSignatureRequest } from "../../schemas/http-signature";
import {
  type InnerList,
  type Item,
  isInnerList,
  type Member,
  parseDictionary,
  parseItem,
  serializeInnerList,
  serializeItem,
  serializeMember,
  Token,
} from "./structured-fields";

/**
 * The agent's HTTP message signature as the request presents it, parsed and with its signature
 * base built (RFC 9421 §2.5) before anything is fetched or read: a field that does not parse,
 * a label with no signature, or a covered component the request does not give is the caller's
 * 400; what only verification can tell (the key, the algorithm, the time) is the Outcome's.
 */
export interface PresentedHttpSignature {
  label: string;
  keyid: string | null;
  alg: string | null;
  tag: string | null;
  nonce: string | null;
  /** Unix seconds (RFC 9421 §2.3); null when the signer gave none. */
  created: number | null;
  expires: number | null;
  signature: Uint8Array;
  /** The signature base (§2.5), or the component it cannot be built for (§2.2's unsupported). */
  base: { ok: true; text: string } | { ok: false; component: string };
  /** Where the signer's key directory is (the `Signature-Agent` member this signature names). */
  agent: SignatureAgent | null;
}

/** A `Signature-Agent` entry: a directory's origin, or a JWKS URL (`type=jwks_uri`). */
export interface SignatureAgent {
  uri: string;
  type: "directory" | "jwks_uri";
}

/** The tags that say which protocol a signature is for, in the order a default prefers them. */
export const KNOWN_TAGS = ["web-bot-auth", "agent-payer-auth", "agent-browser-auth"] as const;

const MAX_COMPONENTS = 32;
const PATH = "http_signature";

export function parsePresented(request: HttpSignatureRequest): PresentedHttpSignature {
  const inputs = dictionary(request.signature_input, `${PATH}.signature_input`);
  const signatures = dictionary(request.signature, `${PATH}.signature`);
  const label = request.label ?? defaultLabel(inputs);
  const input = inputs.get(label);
  if (!input || !isInnerList(input)) {
    throw refused(`${PATH}.signature_input`, `has no signature labelled ${label}`);
  }
  const sig = signatures.get(label);
  if (!sig || isInnerList(sig) || !(sig.value instanceof Uint8Array)) {
    throw refused(`${PATH}.signature`, `has no byte sequence labelled ${label}`);
  }
  if (input.items.length > MAX_COMPONENTS) {
    throw refused(`${PATH}.signature_input`, `covers more than ${MAX_COMPONENTS} components`);
  }
  const params = paramsOf(input);
  const agent = request.signature_agent ? signatureAgentOf(request.signature_agent, input) : null;
  return {
    label,
    ...params,
    signature: sig.value,
    base: signatureBase(input, request.covered),
    agent,
  };
}

function dictionary(text: string, path: string): Map<string, Member> {
  try {
    const dict = parseDictionary(text);
    if (dict.size === 0) throw new SyntaxError("empty");
    return dict;
  } catch (error) {
    const why = error instanceof SyntaxError ? error.message : "unreadable";
    throw refused(path, `is not an RFC 8941 dictionary (${why})`);
  }
}

function defaultLabel(inputs: Map<string, Member>): string {
  for (const tag of KNOWN_TAGS) {
    for (const [label, member] of inputs) {
      if (member.params.get("tag") === tag) return label;
    }
  }
  return inputs.keys().next().value as string;
}

function paramsOf(input: InnerList) {
  const p = input.params;
  const text = (name: string): string | null => {
    const value = p.get(name);
    if (value === undefined) return null;
    if (typeof value !== "string")
      throw refused(`${PATH}.signature_input`, `${name} must be a string`);
    return value;
  };
  const seconds = (name: string): number | null => {
    const value = p.get(name);
    if (value === undefined) return null;
    if (typeof value !== "number" || !Number.isInteger(value) || value < 0) {
      throw refused(`${PATH}.signature_input`, `${name} must be a non-negative integer`);
    }
    return value;
  };
  return {
    keyid: text("keyid"),
    alg: text("alg"),
    tag: text("tag"),
    nonce: text("nonce"),
    created: seconds("created"),
    expires: seconds("expires"),
  };
}

/**
 * The `Signature-Agent` entry the signature names: a Dictionary member (the Web Bot Auth
 * drafts, whose covered `signature-agent;key=…` names it, else the only or first member), or a
 * legacy String item.
 */
function signatureAgentOf(text: string, input: InnerList): SignatureAgent {
  const path = `${PATH}.signature_agent`;
  let member: Member | undefined;
  try {
    if (/^\s*"/.test(text)) {
      member = parseItem(text);
    } else {
      const dict = parseDictionary(text);
      const named = input.items.find((i) => i.value === "signature-agent")?.params.get("key");
      member = typeof named === "string" ? dict.get(named) : dict.values().next().value;
    }
  } catch {
    throw refused(path, "is neither an RFC 8941 string nor a dictionary of them");
  }
  if (!member || isInnerList(member) || typeof member.value !== "string") {
    throw refused(path, "names no URI for this signature");
  }
  const type = member.params.get("type");
  const kind = type instanceof Token ? type.text : "directory";
  if (kind !== "directory" && kind !== "jwks_uri") {
    throw refused(path, "type must be directory or jwks_uri");
  }
  return { uri: member.value, type: kind };
}

/** RFC 9421 §2.5: one line per covered component, then `@signature-params`. */
function signatureBase(
  input: InnerList,
  covered: HttpSignatureRequest["covered"],
): PresentedHttpSignature["base"] {
  const lines: string[] = [];
  const seen = new Set<string>();
  for (const item of input.items) {
    if (typeof item.value !== "string") {
      throw refused(`${PATH}.signature_input`, "every covered component must be a string");
    }
    const id = serializeItem(item);
    // §2.5: a component listed twice makes the base invalid.
    if (seen.has(id)) throw refused(`${PATH}.signature_input`, `covers ${id} twice`);
    seen.add(id);
    const value = componentValue(item, item.value, covered);
    if (value === null) return { ok: false, component: id };
    lines.push(`${id}: ${value}`);
  }
  lines.push(`"@signature-params": ${serializeInnerList(input)}`);
  return { ok: true, text: lines.join("\n") };
}

/** A component's value (§2.1, §2.2); null for a component this service does not derive. */
function componentValue(
  item: Item,
  name: string,
  covered: HttpSignatureRequest["covered"],
): string | null {
  const params = [...item.params.keys()];
  if (name.startsWith("@")) {
    if (params.length > 0) return null;
    const query = covered.query === undefined ? "" : `?${covered.query}`;
    switch (name) {
      case "@method":
        return covered.method;
      case "@authority":
        return covered.authority.toLowerCase();
      case "@scheme":
        return covered.scheme;
      case "@path":
        return covered.path;
      case "@query":
        return query === "" ? "?" : query;
      case "@request-target":
        return `${covered.path}${query}`;
      case "@target-uri":
        return `${covered.scheme}://${covered.authority.toLowerCase()}${covered.path}${query}`;
      default:
        // @query-param, @status and unknown names: not derived here.
        return null;
    }
  }
  const value = covered.headers[name];
  if (value === undefined) {
    throw refused(`${PATH}.covered.headers.${name}`, "is covered by the signature but not given");
  }
  const trimmed = value.trim();
  if (params.length === 0) return trimmed;
  const key = item.params.get("key");
  if (params.length === 1 && typeof key === "string") {
    // §2.1.2: the dictionary member, re-serialized.
    let member: Member | undefined;
    try {
      member = parseDictionary(trimmed).get(key);
    } catch {
      throw refused(`${PATH}.covered.headers.${name}`, "is not an RFC 8941 dictionary");
    }
    if (member === undefined) {
      throw refused(`${PATH}.covered.headers.${name}`, `has no member ${key}`);
    }
    return serializeMember(member);
  }
  return null;
}

function refused(path: string, message: string): ApiError {
  return new ApiError("invalid_request", [{ path, message }]);
}
