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
 * signer. `typ` is required and must be "JOSE". A signature must use exactly the alg its key was
 * registered with (one key, one algorithm: no RS256/PS256 or EdDSA/Ed25519 switching); any other
 * alg makes it `invalid`, an alg no key could have (none, HMAC) `unsupported_alg`. The card is
 * bounded before anything else reads it (depth, array lengths, signature count), and at most
 * 50 reasons are reported. The payload of a 0.3 card is the card exactly as received minus
 * `signatures`; a 1.0 signature verifies over the §8.4.1 form or over the official SDKs' form
 * (agent-card-canonical.ts says where they differ and why both are accepted). The `digest` stays
 * the RFC 8785 form of the card as received minus `signatures`, whatever the version: agents are
 * matched and checks keyed by it.
 */
import { payloadDigest } from "#audit/digest";
import { signingPayloads } from "./agent-card-canonical";
import {
  type CardReason,
  type CardVersion,
  checkCardShape,
  detectVersion,
  isObject,
  type Json,
  sizeProblem,
} from "./agent-card-shape";
import { type CardKey, checkSignatures, type SignatureCheck } from "./agent-card-signatures";

export type { CardForm } from "./agent-card-canonical";
export type { CardReason, CardVersion } from "./agent-card-shape";
export type { CardKey, SignatureCheck, SignatureDiagnosis } from "./agent-card-signatures";

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
  // Bounded before anything walks it: every later step is linear in a card this size.
  const tooBig = sizeProblem(card);
  if (tooBig) return storable({ ...EMPTY, reasons: [tooBig] });
  const reasons: CardReason[] = [];
  const detected = options.version ? { version: options.version } : detectVersion(card);
  if ("reason" in detected) reasons.push(detected.reason);
  const version = "version" in detected ? detected.version : null;
  if (version) reasons.push(...checkCardShape(card, version));

  const { signatures: rawSignatures, ...unsigned } = card;
  const payloads = signingPayloads(card, version);
  if (payloads.forms.length === 0) {
    reasons.push({ code: "not_json", message: "the card cannot be canonicalised as JSON" });
  }
  const signatures = await checkSignatures(rawSignatures, payloads, keys, reasons);
  return storable({
    status: cardStatus(reasons, signatures),
    protocol_version: version,
    digest: payloads.forms.length === 0 ? null : payloadDigest(unsigned),
    name: typeof card.name === "string" ? card.name : null,
    url: serviceUrl(card, version),
    reasons: capped(reasons),
    signatures,
  });
}

/**
 * The check as it stands once the keys behind its valid signatures are revoked (a revocation
 * that raced the check): `unverified`, each such signature `revoked_key`, as a new check would
 * say.
 */
export function afterSignersRevoked(check: CardCheck): CardCheck {
  const signatures = check.signatures.map((s) =>
    s.status === "valid"
      ? { ...s, status: "revoked_key" as const, message: "the key was revoked during the check" }
      : s,
  );
  const revoked = signatures
    .filter((s, i) => s.status === "revoked_key" && check.signatures[i]?.status === "valid")
    .map((s) => ({
      code: "signature_revoked_key",
      message: s.message,
      path: `signatures[${s.index}]`,
    }));
  return { ...check, status: "unverified", reasons: [...check.reasons, ...revoked], signatures };
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

/** More reasons than this say nothing more, and a hostile card could make millions. */
export const MAX_REASONS = 50;

function capped(reasons: CardReason[]): CardReason[] {
  if (reasons.length <= MAX_REASONS) return reasons;
  const more = reasons.length - MAX_REASONS;
  return [
    ...reasons.slice(0, MAX_REASONS),
    { code: "truncated", message: `${more} more reason${more === 1 ? "" : "s"} not shown` },
  ];
}

// What the check reports is stored (text and jsonb columns): Postgres refuses NUL in both, and
// jsonb an unpaired surrogate. Card text is reported with those replaced by U+FFFD (the UTF-8
// round trip replaces unpaired surrogates so).
const utf8 = { encoder: new TextEncoder(), decoder: new TextDecoder() };

function clean<T extends string | null>(text: T): T {
  if (text === null) return text;
  return utf8.decoder.decode(utf8.encoder.encode(text)).replaceAll("\u0000", "\uFFFD") as T;
}

function storable(check: CardCheck): CardCheck {
  return {
    ...check,
    name: clean(check.name),
    url: clean(check.url),
    reasons: check.reasons.map((r) => ({
      ...r,
      message: clean(r.message),
      ...(r.path === undefined ? {} : { path: clean(r.path) }),
    })),
    signatures: check.signatures.map((s) => ({
      ...s,
      kid: clean(s.kid),
      alg: clean(s.alg),
      message: clean(s.message),
    })),
  };
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
