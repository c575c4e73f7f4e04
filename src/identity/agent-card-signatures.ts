/**
 * The signature half of A2A Agent Card verification (see agent-card.ts): each entry of
 * `signatures[]` is a JWS with detached payload, checked against the agent's registered keys
 * over the payloads the card's version allows (agent-card-canonical.ts), in order. A failure is
 * explained: a 1.0 signature that verifies over the card exactly as received, but over none of
 * its canonical forms, comes from a signer that skipped §8.4.1's default-value rules, not from
 * a changed card.
 */
import {
  decodeProtectedHeader,
  errors,
  flattenedVerify,
  type JWK,
  type ProtectedHeaderParameters,
} from "jose";
import type { CardForm, CardPayloads } from "./agent-card-canonical";
import { type CardReason, isObject, type Json } from "./agent-card-shape";
import { SIGNATURE_ALGS, verificationKey } from "./public-jwk";

export interface CardKey {
  /** RFC 7638 thumbprint of the public JWK. */
  kid: string;
  jwk: JWK;
  /** The one JWS alg the key was registered for; a signature under any other is invalid. */
  alg: string;
  status: "active" | "revoked";
}

/**
 * Why a signature that failed cryptographically failed: it verifies over the card as received
 * (`signed_as_received`: the signer did not apply the 1.0 default-value rules), or over nothing
 * (`matches_no_form`: the card changed after signing, or other bytes or another key were signed).
 */
export type SignatureDiagnosis = "signed_as_received" | "matches_no_form";

export interface SignatureCheck {
  index: number;
  kid: string | null;
  alg: string | null;
  status: "valid" | "invalid" | "unknown_key" | "revoked_key" | "malformed" | "unsupported_alg";
  message: string;
  /** The payload a valid signature verified over; kept should its key be revoked later. */
  form: CardForm | null;
  /** Set only on a signature that failed the cryptographic check. */
  diagnosis: SignatureDiagnosis | null;
}

/** Key rotation needs two or three; each one costs up to three signature verifications. */
export const MAX_SIGNATURES = 10;

/** Checks `signatures[]` against `keys`, adding a reason for each signature that is not valid. */
export async function checkSignatures(
  raw: unknown,
  payloads: CardPayloads,
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
  if (raw.length > MAX_SIGNATURES) {
    reasons.push({
      code: "too_many_signatures",
      message: `a card may carry at most ${MAX_SIGNATURES} signatures; this one has ${raw.length}`,
      path: "signatures",
    });
    return [];
  }
  const byKid = new Map<string, CardKey>();
  // Should the registry list a kid twice, revocation wins.
  for (const key of keys) {
    if (!byKid.has(key.kid) || key.status === "revoked") byKid.set(key.kid, key);
  }
  const checks = await Promise.all(
    raw.map((item, index) => checkSignature(item, index, payloads, byKid)),
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

type Outcome = Pick<SignatureCheck, "status" | "message"> &
  Partial<Pick<SignatureCheck, "form" | "diagnosis">>;
type Jws = { protected: string; signature: string; header?: Json };
type Parsed = { jws: Jws; header: ProtectedHeaderParameters };

async function checkSignature(
  item: unknown,
  index: number,
  payloads: CardPayloads,
  keys: Map<string, CardKey>,
): Promise<SignatureCheck> {
  const parsed = parseSignature(item);
  const header = "jws" in parsed ? parsed.header : {};
  const outcome = "jws" in parsed ? await judge(parsed, payloads, keys) : parsed;
  return {
    index,
    kid: typeof header.kid === "string" ? header.kid : null,
    alg: typeof header.alg === "string" ? header.alg : null,
    status: outcome.status,
    message: outcome.message,
    form: outcome.form ?? null,
    diagnosis: outcome.diagnosis ?? null,
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
  payloads: CardPayloads,
  keys: Map<string, CardKey>,
): Promise<Outcome> {
  const problem = headerProblem(header);
  if (problem) return problem;
  const alg = header.alg as string;
  const key = keys.get(header.kid as string);
  if (!key) {
    return { status: "unknown_key", message: "no registered key of the agent has this kid" };
  }
  if (key.status === "revoked") return { status: "revoked_key", message: "the key is revoked" };
  if (alg !== key.alg) {
    return { status: "invalid", message: `the key is registered for ${key.alg}, not ${alg}` };
  }
  if (payloads.forms.length === 0) {
    return { status: "invalid", message: "the card has no canonical form" };
  }
  return verifyOverForms(jws, payloads, key);
}

/** The protected header must name a key and an accepted algorithm, and nothing else exotic. */
function headerProblem(header: ProtectedHeaderParameters): Outcome | null {
  if (typeof header.alg !== "string") {
    return { status: "malformed", message: "the protected header has no alg" };
  }
  if (!SIGNATURE_ALGS.has(header.alg)) {
    return { status: "unsupported_alg", message: `alg ${header.alg} is not accepted` };
  }
  if (typeof header.kid !== "string") {
    return { status: "malformed", message: "the protected header has no kid" };
  }
  if (!isJoseType(header.typ)) {
    return { status: "malformed", message: 'the protected header needs typ "JOSE"' };
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

async function verifyOverForms(jws: Jws, payloads: CardPayloads, key: CardKey): Promise<Outcome> {
  let cryptoKey: CryptoKey;
  try {
    cryptoKey = await verificationKey(key.jwk, key.alg);
  } catch {
    return { status: "invalid", message: "the registered key cannot be imported" };
  }
  for (const { form, payload, uncovered } of payloads.forms) {
    const verdict = await verifies(jws, payload, cryptoKey, key.alg);
    if (verdict === true) return { status: "valid", message: validMessage(form, uncovered), form };
    // A JWS jose cannot even read fails the same way over any payload.
    if (verdict !== false) return { status: "malformed", message: verdict.malformed };
  }
  const asReceived =
    payloads.received !== null &&
    (await verifies(jws, payloads.received, cryptoKey, key.alg)) === true;
  if (asReceived) {
    return {
      status: "invalid",
      message:
        "the signature verifies over the card as received but not over its canonical form: " +
        "the signer kept fields at their default value, which A2A 1.0 §8.4.1 omits " +
        "(the card is as it was signed; its signer needs fixing)",
      diagnosis: "signed_as_received",
    };
  }
  const over =
    payloads.version === "1.0"
      ? "the card's canonical form (A2A 1.0 §8.4.1), the official SDKs' form or the card as received"
      : "the canonical card";
  return {
    status: "invalid",
    message:
      `the signature does not match ${over}: the card changed after it was signed, ` +
      "or other bytes or another key were signed",
    diagnosis: "matches_no_form",
  };
}

/** Detached payload (RFC 7515 Appendix F): the verifier supplies it, base64url-encoded. */
async function verifies(
  jws: Jws,
  payload: string,
  key: CryptoKey,
  alg: string,
): Promise<boolean | { malformed: string }> {
  try {
    await flattenedVerify({ ...jws, payload }, key, { algorithms: [alg] });
    return true;
  } catch (error) {
    if (error instanceof errors.JWSSignatureVerificationFailed) return false;
    return { malformed: error instanceof Error ? error.message : "bad JWS" };
  }
}

/**
 * Paths of what an SDK-form signature does not cover: a few are shown, the rest counted, and
 * each is cut short, since the card chooses its keys and the message is stored.
 */
const SHOWN_PATHS = 5;
const PATH_CHARS = 80;

function validMessage(form: CardForm, uncovered: string[]): string {
  if (form === "spec") return "the signature verifies";
  if (form === "received") return "the signature verifies over the card as received";
  const cut = (path: string) => (path.length > PATH_CHARS ? `${path.slice(0, PATH_CHARS)}…` : path);
  const shown = uncovered.slice(0, SHOWN_PATHS).map(cut).join(", ");
  const more = uncovered.length > SHOWN_PATHS ? ` and ${uncovered.length - SHOWN_PATHS} more` : "";
  return (
    "the signature verifies over the card as the official A2A SDKs canonicalize it, " +
    "not over its A2A 1.0 §8.4.1 form" +
    (uncovered.length > 0 ? `; it does not cover ${shown}${more}, which the SDKs leave out` : "")
  );
}
