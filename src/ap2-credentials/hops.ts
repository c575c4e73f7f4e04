/**
 * One hop at a time: who signed it, what it reveals, how it is tied to the hop before, and the
 * key it hands on. Each check throws the Refusal of its rule (docs/credentials.md).
 */
import type { JWK } from "jose";
import { base64UrlToBytes } from "#audit/encoding";
import type { ParsedHop } from "./chain";
import { type Claims, finiteNumber, has, isClaims, own } from "./claims";
import { resolveDisclosures, textDigest } from "./disclosures";
import { Refusal, refuse } from "./failures";
import {
  isPinned,
  type PinnedKey,
  pinKey,
  SIGNATURE_ALGS,
  thumbprint,
  verifiesUnder,
} from "./keys";

/** The typ of a key-binding hop that delegates further (carries `cnf`) and of the last one. */
export const TYP_INTERMEDIATE = "kb+sd-jwt+kb";
export const TYP_LAST = "kb+sd-jwt";

export interface TrustAnchors {
  /**
   * Active issuer keys. A root whose header names a `kid` is verified with the keys whose JWK
   * `kid` equals it (or, for a JWK without `kid`, whose RFC 7638 thumbprint equals it); a root
   * without `kid` is tried against each key. Each key says which issuer it belongs to, and
   * the constraint types that issuer requires every root it signs to disclose (none if absent).
   */
  keys: { issuerId: string; jwk: JWK; requiredConstraints?: readonly string[] }[];
  /**
   * The issuers whose credentials are reviewed when a status list they name cannot be had
   * (`credential_issuers.status_required`, docs/status-lists.md).
   */
  statusRequired?: string[];
}

/** A hop read without any trust: its claims with disclosures resolved, and its mandate. */
export interface HopReading {
  /** The JWT claims with the disclosures in place (`iat`, `aud`, `nonce`, `sd_hash`, …). */
  claims: Claims;
  /** The one disclosed item of `delegate_payload`: the hop's effective payload. */
  mandate: Claims;
  /** A disclosure rule broken although the mandate could be read (an unreferenced one). */
  refusal: Refusal | null;
}

// What each hop read to, for the life of the parsed hop: a request's parser reads every hop for
// its mandate, and the verifier reads the same hops again.
const readings = new WeakMap<ParsedHop, HopReading | Refusal>();

/**
 * Resolves a hop's disclosures and finds its delegate item; a Refusal when it cannot. An
 * unreferenced disclosure is the reported cause whenever there is one: an edited disclosure no
 * longer matches its digest, which is why the item it carried is missing. A hop is read once;
 * reading it again answers the same reading.
 */
export function readHop(hop: ParsedHop): HopReading | Refusal {
  let reading = readings.get(hop);
  if (reading === undefined) {
    reading = readOnce(hop);
    readings.set(hop, reading);
  }
  return reading;
}

function readOnce(hop: ParsedHop): HopReading | Refusal {
  try {
    const { claims, unreferenced } = resolveDisclosures(hop.payload, hop.disclosures);
    const refusal =
      unreferenced.length === 0
        ? null
        : new Refusal("disclosure_invalid", {
            message: `hop ${hop.index}: disclosure ${unreferenced[0]} is referenced by no digest`,
          });
    try {
      return { claims, mandate: delegateItem(hop, claims), refusal };
    } catch (error) {
      throw refusal ?? error;
    }
  } catch (error) {
    if (error instanceof Refusal) return error;
    throw error;
  }
}

/**
 * Exactly one disclosed delegate item (an object): every element of the signed
 * `delegate_payload` must be a `{"...": digest}` reference, and exactly one must be disclosed.
 */
function delegateItem(hop: ParsedHop, claims: Claims): Claims {
  const signed = own(hop.payload, "delegate_payload");
  const elements = Array.isArray(signed) ? signed : [];
  if (elements.length === 0 || !elements.every((e) => isClaims(e) && has(e, "..."))) {
    refuse("disclosure_invalid", `hop ${hop.index}: delegate_payload must hold digests only`);
  }
  const items = own(claims, "delegate_payload") as unknown[];
  const [item] = items;
  if (items.length !== 1 || !isClaims(item)) {
    refuse(
      "disclosure_invalid",
      `hop ${hop.index}: exactly one delegate item must be disclosed, found ${items.length}`,
    );
  }
  return item;
}

/** `alg` is ES256 or EdDSA and no `crit` extension changes what is signed. */
export function checkHeader(hop: ParsedHop): void {
  const alg = own(hop.header, "alg");
  if (typeof alg !== "string" || !SIGNATURE_ALGS.includes(alg)) {
    refuse("signature_invalid", `hop ${hop.index}: alg ${String(alg)} is refused (ES256, EdDSA)`);
  }
  if (has(hop.header, "crit")) {
    refuse("signature_invalid", `hop ${hop.index}: crit header extensions are refused`);
  }
}

/**
 * The signature is the one spelling of its 64 bytes (ES256's r‖s, EdDSA's R‖S): canonical
 * unpadded base64url, as the header and payload already are (`parseChain`). jose decodes
 * leniently, so the last character of an Ed25519 signature has 16 spellings that all verify;
 * refused here, no text of a chain is an alternative spelling of another.
 */
export function checkSignatureForm(hop: ParsedHop): void {
  const encoded = hop.jws.slice(hop.jws.lastIndexOf(".") + 1);
  let bytes: Uint8Array;
  try {
    bytes = base64UrlToBytes(encoded);
  } catch {
    refuse("signature_invalid", `hop ${hop.index}: the signature is not canonical base64url`);
  }
  if (bytes.length !== SIGNATURE_BYTES) {
    refuse("signature_invalid", `hop ${hop.index}: the signature is not ${SIGNATURE_BYTES} bytes`);
  }
}

/** Both algorithms sign with 64 bytes: ES256 as JWS's r‖s (RFC 7518 §3.4), EdDSA as R‖S. */
const SIGNATURE_BYTES = 64;

/** The anchor key that verified a JWS: its issuer, the key, what the issuer requires. */
export interface AnchorMatch {
  issuerId: string;
  key: PinnedKey;
  requiredConstraints: readonly string[];
}

/**
 * The anchor whose key verifies `jws`, or null: a header naming a `kid` is tried with the keys
 * whose JWK `kid` equals it (or, for a JWK without `kid`, whose RFC 7638 thumbprint equals it);
 * a header without `kid` with each key. The root's rule, and an issuer-signed Payment Receipt's
 * (src/payment-receipts/receipt-signature.ts). `remember`: keep a success (`verifiesUnder`).
 */
export async function anchorVerifying(
  jws: string,
  header: Claims,
  anchors: TrustAnchors,
  { remember = false }: { remember?: boolean } = {},
): Promise<AnchorMatch | null> {
  const kid = own(header, "kid");
  if (kid !== undefined && typeof kid !== "string") return null;
  for (const anchor of anchors.keys) {
    const key = pinKey(anchor.jwk);
    if (!isPinned(key)) continue;
    const named =
      kid === undefined ||
      anchor.jwk.kid === kid ||
      (anchor.jwk.kid === undefined && thumbprint(key) === kid);
    if (named && (await verifiesUnder(jws, header, key, { remember }))) {
      return {
        issuerId: anchor.issuerId,
        key,
        requiredConstraints: anchor.requiredConstraints ?? [],
      };
    }
  }
  return null;
}

/** The anchor whose key verifies the root, or `untrusted_issuer`. */
export async function verifyRoot(root: ParsedHop, anchors: TrustAnchors): Promise<AnchorMatch> {
  const match = await anchorVerifying(root.jws, root.header, anchors, { remember: true });
  if (match) return match;
  const kid = own(root.header, "kid");
  const named = typeof kid === "string" ? ` with kid "${kid}"` : "";
  return refuse("untrusted_issuer", `no active issuer key${named} verifies the root`);
}

/**
 * Hop i ≥ 1 is signed by the key hop i-1 delegated, under that key's algorithm. `delegates`: the
 * hop hands a key on (it is not the last), so it comes back with later payments and its verified
 * signature is kept.
 */
export async function verifyDelegated(
  hop: ParsedHop,
  key: PinnedKey,
  delegates: boolean,
): Promise<void> {
  const alg = own(hop.header, "alg");
  if (alg !== key.alg) {
    refuse(
      "signature_invalid",
      `hop ${hop.index} says alg ${String(alg)}, but the key delegated to it is ${key.alg}`,
    );
  }
  if (!(await verifiesUnder(hop.jws, hop.header, key, { remember: delegates }))) {
    refuse(
      "delegation_broken",
      `hop ${hop.index} does not verify under the key hop ${hop.index - 1} delegated ` +
        "(signed by another key, or altered after signing)",
    );
  }
}

/**
 * A key-binding hop's own claims: its `typ` for its place in the chain, a numeric `iat`, and
 * exactly one binding to the previous hop, over the text as received.
 */
export function checkKeyBinding(
  hop: ParsedHop,
  previous: ParsedHop,
  claims: Claims,
  last: boolean,
): void {
  const typ = own(hop.header, "typ");
  if (last && typ === TYP_INTERMEDIATE) {
    refuse("delegation_broken", `the chain ends in an intermediate hop: no closed mandate`);
  }
  const expected = last ? TYP_LAST : TYP_INTERMEDIATE;
  if (typ !== expected) {
    refuse("delegation_broken", `hop ${hop.index}: typ must be ${expected}, not ${String(typ)}`);
  }
  if (finiteNumber(own(claims, "iat")) === undefined) {
    refuse("delegation_broken", `hop ${hop.index}: a key-binding hop must have a numeric iat`);
  }
  const sdHash = own(claims, "sd_hash");
  const jwtHash = own(claims, "issuer_jwt_hash");
  if ((sdHash === undefined) === (jwtHash === undefined)) {
    refuse("delegation_broken", `hop ${hop.index}: needs exactly one of sd_hash, issuer_jwt_hash`);
  }
  const [name, bound, over] =
    sdHash !== undefined
      ? ["sd_hash", sdHash, previous.segment]
      : ["issuer_jwt_hash", jwtHash, previous.jws];
  if (bound !== textDigest(over)) {
    refuse("delegation_broken", `hop ${hop.index}: ${name} does not match hop ${previous.index}`);
  }
}

/** The key a hop hands on: its mandate's `cnf.jwk`, public, EC P-256 or Ed25519. */
export function delegatedKey(hop: ParsedHop, mandate: Claims): PinnedKey {
  const cnf = own(mandate, "cnf");
  const jwk = isClaims(cnf) ? own(cnf, "jwk") : undefined;
  if (jwk === undefined) {
    refuse(
      "delegation_broken",
      `hop ${hop.index} delegates further but its mandate has no cnf.jwk`,
    );
  }
  const key = pinKey(jwk);
  if (!isPinned(key)) refuse("delegation_broken", `hop ${hop.index}: cnf.jwk ${key.problem}`);
  return key;
}

/** The last hop's mandate is closed: it names no further key. */
export function checkClosed(hop: ParsedHop, mandate: Claims): void {
  if (has(mandate, "cnf")) {
    refuse("delegation_broken", `hop ${hop.index}: the closed mandate must not carry cnf`);
  }
}
