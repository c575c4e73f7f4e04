/**
 * Splitting an AP2 v0.2 credential into its hops (the vectors' README, "Wire format" 1):
 *
 *   <root JWS>~<d>~<d>~~<hop1 JWS>~<d>~~<leaf JWS>~<d>~
 *
 * Split on `~~`, give every segment but the last its trailing `~` back, split each on `~` into
 * the JWS, its disclosures and a final empty string. Only the shape is checked here: a string
 * that cannot be split into hops whose JWS header and payload are JSON objects is
 * `ChainMalformed` (the service's 422); everything else is the verifier's to judge.
 */
import { type Claims, isClaims, jsonOfBase64url } from "./claims";

/** Bounds on what is read at all, far above any real chain (the SDK's are 2–3 hops). */
export const CHAIN_LIMITS = {
  /** Characters of the whole credential (its text is ASCII, so also bytes). */
  maxChars: 64 * 1024,
  maxHops: 8,
  maxDisclosuresPerHop: 256,
} as const;

export interface ParsedHop {
  /** 0 for the root SD-JWT, then each key-binding hop in order. */
  index: number;
  /** `<JWS>~<d1>~…~<dn>~` exactly as received: what the next hop's `sd_hash` covers. */
  segment: string;
  /** The compact JWS as received: what `issuer_jwt_hash` and the references cover. */
  jws: string;
  /** Disclosure texts in wire order, as received (their digests are over these texts). */
  disclosures: string[];
  /** The decoded JOSE header and JWT payload, not yet verified. */
  header: Claims;
  payload: Claims;
}

export interface ParsedChain {
  credential: string;
  hops: ParsedHop[];
}

export interface MalformedDetail {
  /** Where, from `credential`: `credential.hops[1].payload`, `credential.hops[0].disclosures[2]`. */
  path: string;
  message: string;
}

/** A credential that cannot be split into hops at all: the service answers 422 with `details`. */
export class ChainMalformed extends Error {
  constructor(readonly details: MalformedDetail[]) {
    super(details.map((d) => `${d.path}: ${d.message}`).join("; "));
    this.name = "ChainMalformed";
  }
}

const WIRE_ALPHABET = /^[A-Za-z0-9_.~-]+$/;
const BASE64URL = /^[A-Za-z0-9_-]*$/;

function malformed(path: string, message: string): never {
  throw new ChainMalformed([{ path, message }]);
}

/**
 * Splits `credential` into hops, or throws `ChainMalformed`; it throws nothing else, whatever
 * the input (a property test holds it to that).
 */
export function parseChain(credential: string): ParsedChain {
  if (typeof credential !== "string") malformed("credential", "must be a string");
  if (credential.length > CHAIN_LIMITS.maxChars) {
    malformed("credential", `must be at most ${CHAIN_LIMITS.maxChars} characters`);
  }
  if (!WIRE_ALPHABET.test(credential)) {
    malformed("credential", "must be base64url segments joined by '.' and '~'");
  }
  if (!credential.endsWith("~")) {
    malformed("credential", "must end with '~' (AP2 chains carry no trailing key-binding JWT)");
  }
  const segments = credential.split("~~");
  if (segments.length > CHAIN_LIMITS.maxHops) {
    malformed("credential", `must have at most ${CHAIN_LIMITS.maxHops} hops`);
  }
  const last = segments.length - 1;
  const hops = segments.map((segment, index) =>
    parseHop(index < last ? `${segment}~` : segment, index),
  );
  return { credential, hops };
}

function parseHop(segment: string, index: number): ParsedHop {
  const path = `credential.hops[${index}]`;
  const parts = segment.split("~");
  const jws = parts[0] ?? "";
  const disclosures = parts.slice(1, -1);
  if (jws === "") malformed(path, "must start with a JWS");
  if (disclosures.length === 0) malformed(path, "must carry at least one disclosure");
  if (disclosures.length > CHAIN_LIMITS.maxDisclosuresPerHop) {
    malformed(path, `must carry at most ${CHAIN_LIMITS.maxDisclosuresPerHop} disclosures`);
  }
  const empty = disclosures.indexOf("");
  if (empty >= 0) malformed(`${path}.disclosures[${empty}]`, "must not be empty");

  const pieces = jws.split(".");
  if (pieces.length !== 3) malformed(`${path}.jws`, "must be a compact JWS of three parts");
  const [header, payload] = pieces as [string, string, string];
  return {
    index,
    segment,
    jws,
    disclosures,
    header: jsonObject(header, `${path}.header`),
    payload: jsonObject(payload, `${path}.payload`),
  };
}

function jsonObject(part: string, path: string): Claims {
  if (part === "" || !BASE64URL.test(part)) malformed(path, "must be base64url");
  let value: unknown;
  try {
    value = jsonOfBase64url(part);
  } catch {
    malformed(path, "must be canonical base64url of UTF-8 JSON");
  }
  if (!isClaims(value)) malformed(path, "must be a JSON object");
  return value;
}
