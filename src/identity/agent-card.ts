/**
 * A2A Agent Card verification: shape by protocol version, then detached JWS signatures.
 * Pure: no database, no network. The caller supplies the keys it trusts.
 *
 * What the A2A specification says, in short (a2aproject/A2A: the 0.3 JSON schema
 * `specification/json/a2a.json` and `types/src/types.ts`; for 1.0 `specification/a2a.proto`
 * and `docs/specification.md` §4.4, §5.7, §8.3, §8.4):
 *
 * - Versions. A 0.3 card names its protocol in a top-level `protocolVersion` ("0.3.0"). 1.0
 *   removed that field (and `url`, `preferredTransport`): a 1.0 card lists `supportedInterfaces`,
 *   each interface carrying its own `url`, `protocolBinding` and `protocolVersion`, in
 *   preference order, so the first entry is the service url.
 * - Required fields. 0.3: protocolVersion, name, description, url, version, capabilities,
 *   defaultInputModes, defaultOutputModes, skills. 1.0: name, description, supportedInterfaces,
 *   version, capabilities, defaultInputModes, defaultOutputModes, skills. In both, a skill needs
 *   id, name, description and tags, and a provider (optional) needs organization and url. In
 *   1.0 a field marked REQUIRED that is an array must hold at least one element (§5.7).
 * - Signatures. `signatures[]` holds JWS JSON objects {protected, signature, header?} whose
 *   payload is detached: the card without `signatures`, canonicalised with RFC 8785 (JCS). The
 *   protected header carries `alg` and `kid`, `typ` should be "JOSE", `jku` may point at a key
 *   set. Keys that are expired or revoked must not verify anything; a client should verify at
 *   least one signature before trusting a card, and several may coexist during key rotation.
 *
 * Choices made here: keys come only from the caller's registry (looked up by `kid`, the RFC
 * 7638 thumbprint); `jku` is never fetched, since a URL chosen by the signer cannot vouch for the
 * signer. Only asymmetric algorithms are accepted, each tied to its key type, so neither `none`
 * nor an HMAC keyed with a public key can pass. The payload is the card exactly as received
 * minus `signatures`: §8.4 also asks verifiers to drop fields holding protobuf defaults, which
 * needs the full proto field table; a card published with such fields but signed without them
 * reports `invalid` rather than being guessed at.
 */
import {
  decodeProtectedHeader,
  errors,
  flattenedVerify,
  importJWK,
  type JWK,
  type ProtectedHeaderParameters,
} from "jose";
import { canonicalize } from "../ledger/canonical";
import { payloadDigest } from "../ledger/digest";
import { base64url } from "../lib/encoding";
import {
  type CardReason,
  type CardVersion,
  checkCardShape,
  detectVersion,
  isObject,
  type Json,
} from "./agent-card-shape";

export type { CardReason, CardVersion } from "./agent-card-shape";

export interface CardKey {
  /** RFC 7638 thumbprint of the public JWK. */
  kid: string;
  jwk: JWK;
  status: "active" | "revoked";
}

export interface SignatureCheck {
  index: number;
  kid: string | null;
  alg: string | null;
  status: "valid" | "invalid" | "unknown_key" | "revoked_key" | "malformed" | "unsupported_alg";
  message: string;
}

export interface CardCheck {
  status: "verified" | "unverified" | "invalid";
  protocol_version: CardVersion | null;
  /** `sha256:<hex>` of the RFC 8785 form of the card without `signatures`. */
  digest: string | null;
  name: string | null;
  /** The service url: 0.3 `url`; 1.0 the first (preferred) supported interface's url. */
  url: string | null;
  reasons: CardReason[];
  signatures: SignatureCheck[];
}

/**
 * Checks a card's shape for its protocol version (detected from the card unless
 * `options.version` says otherwise) and every signature in it against `keys`.
 * `verified` needs a sound shape, no bad signature and at least one valid one.
 */
export async function verifyAgentCard(
  card: unknown,
  keys: CardKey[],
  options: { version?: CardVersion } = {},
): Promise<CardCheck> {
  if (!isObject(card)) {
    return { ...EMPTY, reasons: [{ code: "not_an_object", message: "a card is a JSON object" }] };
  }
  const reasons: CardReason[] = [];
  const detected = options.version ? { version: options.version } : detectVersion(card);
  if ("reason" in detected) reasons.push(detected.reason);
  const version = "version" in detected ? detected.version : null;
  if (version) reasons.push(...checkCardShape(card, version));

  const { signatures: rawSignatures, ...unsigned } = card;
  const payload = canonicalPayload(unsigned);
  if (payload === null) {
    reasons.push({ code: "not_json", message: "the card cannot be canonicalised as JSON" });
  }
  const signatures = await checkSignatures(rawSignatures, payload, keys, reasons);
  return {
    status: cardStatus(reasons, signatures),
    protocol_version: version,
    digest: payload === null ? null : payloadDigest(unsigned),
    name: typeof card.name === "string" ? card.name : null,
    url: serviceUrl(card, version),
    reasons,
    signatures,
  };
}

const EMPTY: CardCheck = {
  status: "invalid",
  protocol_version: null,
  digest: null,
  name: null,
  url: null,
  reasons: [],
  signatures: [],
};

function canonicalPayload(unsigned: Json): string | null {
  try {
    return base64url(new TextEncoder().encode(canonicalize(unsigned)));
  } catch {
    return null;
  }
}

function serviceUrl(card: Json, version: CardVersion | null): string | null {
  if (version === "0.3") return typeof card.url === "string" ? card.url : null;
  if (version === "1.0" && Array.isArray(card.supportedInterfaces)) {
    const first: unknown = card.supportedInterfaces[0];
    return isObject(first) && typeof first.url === "string" ? first.url : null;
  }
  return null;
}

const FAILING = new Set<SignatureCheck["status"]>(["invalid", "malformed", "unsupported_alg"]);

function cardStatus(reasons: CardReason[], signatures: SignatureCheck[]): CardCheck["status"] {
  // Signature reasons are reported per signature; only shape problems decide here.
  if (reasons.some((r) => !r.code.startsWith("signature_") && r.code !== "no_signature")) {
    return "invalid";
  }
  if (signatures.some((s) => FAILING.has(s.status))) return "invalid";
  return signatures.some((s) => s.status === "valid") ? "verified" : "unverified";
}

// ---- Signatures ----------------------------------------------------------------------------

async function checkSignatures(
  raw: unknown,
  payload: string | null,
  keys: CardKey[],
  reasons: CardReason[],
): Promise<SignatureCheck[]> {
  if (raw !== undefined && !Array.isArray(raw)) {
    reasons.push({
      code: "wrong_type",
      message: "signatures must be an array",
      path: "signatures",
    });
    return [];
  }
  if (raw === undefined || raw.length === 0) {
    reasons.push({ code: "no_signature", message: "the card carries no signature" });
    return [];
  }
  const byKid = new Map<string, CardKey>();
  // Should the registry list a kid twice, revocation wins.
  for (const key of keys) {
    if (!byKid.has(key.kid) || key.status === "revoked") byKid.set(key.kid, key);
  }
  const checks = await Promise.all(
    raw.map((item, index) => checkSignature(item, index, payload, byKid)),
  );
  for (const check of checks) {
    if (check.status === "valid") continue;
    reasons.push({
      code: `signature_${check.status}`,
      message: check.message,
      path: `signatures[${check.index}]`,
    });
  }
  return checks;
}

/** Algorithms accepted, each with the only key type it may be used with. */
const KEY_TYPE_FOR_ALG: Record<string, (jwk: JWK) => boolean> = {
  EdDSA: (k) => k.kty === "OKP" && k.crv === "Ed25519",
  Ed25519: (k) => k.kty === "OKP" && k.crv === "Ed25519",
  ES256: (k) => k.kty === "EC" && k.crv === "P-256",
  ES384: (k) => k.kty === "EC" && k.crv === "P-384",
  RS256: isStrongRsa,
  RS384: isStrongRsa,
  RS512: isStrongRsa,
  PS256: isStrongRsa,
  PS384: isStrongRsa,
  PS512: isStrongRsa,
};

function isStrongRsa(jwk: JWK): boolean {
  // base64url carries 6 bits a character: 2048 bits of modulus need at least 342 of them.
  return jwk.kty === "RSA" && typeof jwk.n === "string" && jwk.n.length >= 342;
}

type Outcome = Pick<SignatureCheck, "status" | "message">;
type Jws = { protected: string; signature: string; header?: Json };
type Parsed = { jws: Jws; header: ProtectedHeaderParameters };

async function checkSignature(
  item: unknown,
  index: number,
  payload: string | null,
  keys: Map<string, CardKey>,
): Promise<SignatureCheck> {
  const parsed = parseSignature(item);
  if (!("jws" in parsed)) return { index, kid: null, alg: null, ...parsed };
  const { kid, alg } = parsed.header;
  const outcome = await judge(parsed, payload, keys);
  return {
    index,
    kid: typeof kid === "string" ? kid : null,
    alg: typeof alg === "string" ? alg : null,
    ...outcome,
  };
}

function parseSignature(item: unknown): Parsed | Outcome {
  if (!isObject(item) || typeof item.protected !== "string" || typeof item.signature !== "string") {
    return { status: "malformed", message: "a signature needs string `protected` and `signature`" };
  }
  const { protected: encoded, signature, header } = item;
  if (header !== undefined && !isObject(header)) {
    return { status: "malformed", message: "the unprotected `header` must be an object" };
  }
  try {
    const jws = { protected: encoded, signature, ...(header ? { header } : {}) };
    return { jws, header: decodeProtectedHeader(jws) };
  } catch {
    return { status: "malformed", message: "the protected header is not base64url JSON" };
  }
}

async function judge(
  { jws, header }: Parsed,
  payload: string | null,
  keys: Map<string, CardKey>,
): Promise<Outcome> {
  const problem = headerProblem(header);
  if (problem) return problem;
  const alg = header.alg as string;
  const key = keys.get(header.kid as string);
  if (!key) return { status: "unknown_key", message: `no registered key has kid ${header.kid}` };
  if (key.status === "revoked") return { status: "revoked_key", message: "the key is revoked" };
  const fits = KEY_TYPE_FOR_ALG[alg] as (jwk: JWK) => boolean;
  if (!fits(key.jwk) || (key.jwk.alg !== undefined && key.jwk.alg !== alg)) {
    return { status: "invalid", message: `${alg} cannot be used with the registered key` };
  }
  if (payload === null) return { status: "invalid", message: "the card has no canonical form" };
  return verifyDetached(jws, payload, key.jwk, alg);
}

/** The protected header must name a key and an accepted algorithm, and nothing else exotic. */
function headerProblem(header: ProtectedHeaderParameters): Outcome | null {
  if (typeof header.alg !== "string") {
    return { status: "malformed", message: "the protected header has no alg" };
  }
  if (!Object.hasOwn(KEY_TYPE_FOR_ALG, header.alg)) {
    return { status: "unsupported_alg", message: `alg ${header.alg} is not accepted` };
  }
  if (typeof header.kid !== "string") {
    return { status: "malformed", message: "the protected header has no kid" };
  }
  if (header.typ !== undefined && !isJoseType(header.typ)) {
    return { status: "malformed", message: 'typ, when present, must be "JOSE"' };
  }
  // The payload is the base64url of the canonical card; no extension may change that.
  if (header.crit !== undefined || header.b64 !== undefined) {
    return { status: "malformed", message: "crit and b64 are not allowed in card signatures" };
  }
  return null;
}

function isJoseType(typ: unknown): boolean {
  // Media type names compare case-insensitively; RFC 7515 §4.1.9 lets "application/" be omitted.
  return typeof typ === "string" && ["jose", "application/jose"].includes(typ.toLowerCase());
}

async function verifyDetached(jws: Jws, payload: string, jwk: JWK, alg: string): Promise<Outcome> {
  let key: Awaited<ReturnType<typeof importJWK>>;
  try {
    key = await importJWK({ ...jwk, alg }, alg);
  } catch {
    return { status: "invalid", message: "the registered key cannot be imported" };
  }
  try {
    // Detached payload (RFC 7515 Appendix F): the verifier supplies it, base64url-encoded.
    await flattenedVerify({ ...jws, payload }, key, { algorithms: [alg] });
    return { status: "valid", message: "the signature verifies" };
  } catch (error) {
    if (error instanceof errors.JWSSignatureVerificationFailed) {
      return { status: "invalid", message: "the signature does not match the canonical card" };
    }
    return { status: "malformed", message: error instanceof Error ? error.message : "bad JWS" };
  }
}
