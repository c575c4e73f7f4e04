import { type CryptoKey, importJWK, type JWK } from "jose";
import type {
  AgentBinding,
  HttpSignatureFailure,
  HttpSignatureOutcome,
} from "../../schemas/http-signature";
import type { PresentedHttpSignature } from "./presented";

/**
 * Verifying the agent's HTTP message signature (RFC 9421 §3.2) with WebCrypto, under a key of
 * the org's registered agent keys or of the signer's directory, then its time (§2.3 `created`,
 * `expires`) and its nonce, and binding its key to the mandate's and the Agent Card's
 * (docs/http-signatures.md). Pure but for WebCrypto; the reads and fetches happen before.
 */

/** Clock skew allowed either way, and the longest a signature is accepted after `created`. */
export const SKEW_SECONDS = 60;
export const MAX_AGE_SECONDS = 300;

/** An agent key the context read found under the signature's `keyid` (its RFC 7638 thumbprint). */
export interface RegisteredHttpKey {
  thumbprint: string;
  agent_id: string;
  jwk: JWK;
  alg: string;
  status: "active" | "revoked";
  /** The key signs the agent's verified Agent Card. */
  signs_card: boolean;
}

/** A directory key with its RFC 7638 thumbprint (Web Bot Auth's `keyid`). */
export interface DirectoryKey {
  jwk: JWK;
  thumbprint: string;
}

export type DirectoryKeys = { ok: true; keys: DirectoryKey[] } | { ok: false; reason: string };

/** What the context read answers about the signature (src/assess/http-signature/read.ts). */
export interface HttpSignatureRead {
  key: RegisteredHttpKey | null;
  /** False when the nonce was seen for this keyid in this mode; null without a nonce. */
  nonce_fresh: boolean | null;
}

/** What the binding compares the HTTP key with: the mandate's `cnf` key and the named card. */
export interface BindingTargets {
  /** RFC 7638 thumbprint of the mandate's `cnf.jwk` (or the credential's holder key). */
  mandateKey: string | null;
  /** The agent that key is registered to (the context's `keyHit`). */
  mandateAgent: string | null;
  /** The agent of the verified Agent Card the request names (the context's `cardHit`). */
  cardAgent: string | null;
}

export interface HttpSignatureInputs {
  registered: RegisteredHttpKey | null;
  directory: DirectoryKeys | null;
  /** False when the nonce was seen before for this key in this mode; null without a nonce. */
  nonceFresh: boolean | null;
  now: number;
  targets: BindingTargets;
}

type Algorithm = {
  /** The JWS algorithm jose imports the key for (the WebCrypto parameters it implies). */
  importAs: "Ed25519" | "ES256" | "ES384" | "PS512" | "RS256";
  verifyAs: Parameters<typeof crypto.subtle.verify>[0];
  fits: (jwk: JWK) => boolean;
};

/** RFC 9421 §6.2's algorithms that a public key verifies (`hmac-sha256` needs a shared secret). */
const ALGORITHMS: Record<string, Algorithm> = {
  ed25519: {
    importAs: "Ed25519",
    verifyAs: { name: "Ed25519" },
    fits: (k) => k.kty === "OKP" && k.crv === "Ed25519",
  },
  "ecdsa-p256-sha256": {
    importAs: "ES256",
    verifyAs: { name: "ECDSA", hash: "SHA-256" },
    fits: (k) => k.kty === "EC" && k.crv === "P-256",
  },
  "ecdsa-p384-sha384": {
    importAs: "ES384",
    verifyAs: { name: "ECDSA", hash: "SHA-384" },
    fits: (k) => k.kty === "EC" && k.crv === "P-384",
  },
  "rsa-pss-sha512": {
    importAs: "PS512",
    verifyAs: { name: "RSA-PSS", saltLength: 64 },
    fits: (k) => k.kty === "RSA",
  },
  "rsa-v1_5-sha256": {
    importAs: "RS256",
    verifyAs: { name: "RSASSA-PKCS1-v1_5" },
    fits: (k) => k.kty === "RSA",
  },
};

/** A key's algorithm when the signature names none: from its curve, or its JWS `alg`. */
function algorithmOf(jwk: JWK, registeredAlg: string | undefined): string | null {
  if (jwk.kty === "OKP" && jwk.crv === "Ed25519") return "ed25519";
  if (jwk.kty === "EC" && jwk.crv === "P-256") return "ecdsa-p256-sha256";
  if (jwk.kty === "EC" && jwk.crv === "P-384") return "ecdsa-p384-sha384";
  const alg = registeredAlg ?? jwk.alg;
  if (jwk.kty === "RSA" && alg === "PS512") return "rsa-pss-sha512";
  if (jwk.kty === "RSA" && alg === "RS256") return "rsa-v1_5-sha256";
  return null;
}

const imported = new Map<string, CryptoKey>();
const MAX_IMPORTED = 512;

/** The public key as WebCrypto holds it, imported once per isolate per key and algorithm. */
async function cryptoKey(thumbprint: string, jwk: JWK, alg: string, algorithm: Algorithm) {
  const id = `${alg}:${thumbprint}`;
  const held = imported.get(id);
  if (held) return held;
  // The public members only: a stray `alg`, `use` or `key_ops` must not refuse the import.
  const { kty, crv, x, y, n, e } = jwk;
  const members = Object.fromEntries(
    Object.entries({ kty, crv, x, y, n, e }).filter(([, value]) => value !== undefined),
  );
  const key = (await importJWK(members, algorithm.importAs, { extractable: false })) as CryptoKey;
  if (imported.size >= MAX_IMPORTED) imported.delete(imported.keys().next().value as string);
  imported.set(id, key);
  return key;
}

/** When the nonce stops mattering: past it the signature is refused for its time anyway. */
export function nonceExpiry(presented: PresentedHttpSignature): number | null {
  if (presented.nonce === null || presented.created === null) return null;
  const until = Math.min(
    presented.expires ?? Number.POSITIVE_INFINITY,
    presented.created + MAX_AGE_SECONDS,
  );
  return (until + SKEW_SECONDS) * 1000;
}

export async function verifyHttpSignature(
  presented: PresentedHttpSignature,
  inputs: HttpSignatureInputs,
): Promise<HttpSignatureOutcome> {
  const found = keyOf(presented, inputs);
  const outcome = (
    failure: HttpSignatureFailure | null,
    alg: string | null,
    thumbprint: string | null,
  ): HttpSignatureOutcome => ({
    verified: failure === null,
    label: presented.label,
    keyid: presented.keyid,
    tag: presented.tag,
    alg,
    key_thumbprint: thumbprint,
    key_source: found.source ?? null,
    agent_binding:
      failure === null && thumbprint !== null
        ? bindingOf(thumbprint, inputs.registered, inputs.targets)
        : "absent",
    ...(failure === null ? {} : { failure }),
  });
  if ("failure" in found) return outcome(found.failure, null, null);
  const { jwk, thumbprint, registeredAlg } = found;
  const alg = presented.alg ?? algorithmOf(jwk, registeredAlg);
  const algorithm = alg === null ? undefined : ALGORITHMS[alg];
  if (alg === null || algorithm === undefined) {
    return outcome("unsupported_algorithm", alg, thumbprint);
  }
  if (!algorithm.fits(jwk)) return outcome("algorithm_mismatch", alg, thumbprint);
  if (!presented.base.ok) return outcome("unsupported_component", alg, thumbprint);
  let valid: boolean;
  try {
    const key = await cryptoKey(thumbprint, jwk, alg, algorithm);
    valid = await crypto.subtle.verify(
      algorithm.verifyAs,
      key,
      presented.signature,
      new TextEncoder().encode(presented.base.text),
    );
  } catch {
    // A key WebCrypto will not import, or a signature of the wrong length.
    valid = false;
  }
  if (!valid) return outcome("signature_invalid", alg, thumbprint);
  const late = timeFailure(presented, inputs.now);
  if (late) return outcome(late, alg, thumbprint);
  if (inputs.nonceFresh === false) return outcome("nonce_replayed", alg, thumbprint);
  return outcome(null, alg, thumbprint);
}

type FoundKey =
  | { jwk: JWK; thumbprint: string; registeredAlg?: string; source: "registered" | "directory" }
  | { failure: HttpSignatureFailure; source?: "registered" };

/**
 * The key named by `keyid`: a registered agent key whose thumbprint it is, else a key of the
 * `Signature-Agent` directory whose thumbprint (Web Bot Auth) or `kid` it is.
 */
function keyOf(presented: PresentedHttpSignature, inputs: HttpSignatureInputs): FoundKey {
  const { registered, directory } = inputs;
  if (registered) {
    if (registered.status !== "active") return { failure: "key_revoked", source: "registered" };
    return {
      jwk: registered.jwk,
      thumbprint: registered.thumbprint,
      registeredAlg: registered.alg,
      source: "registered",
    };
  }
  if (directory && !directory.ok) return { failure: "directory_unavailable" };
  const keyid = presented.keyid;
  const hit = directory?.ok
    ? (directory.keys.find((k) => k.thumbprint === keyid) ??
      directory.keys.find((k) => keyid !== null && k.jwk.kid === keyid))
    : undefined;
  if (!hit) return { failure: "unknown_key" };
  return { jwk: hit.jwk, thumbprint: hit.thumbprint, source: "directory" };
}

/** RFC 9421 §3.2.1: `expires` passed, `created` ahead, or older than this service accepts. */
function timeFailure(presented: PresentedHttpSignature, now: number): HttpSignatureFailure | null {
  const nowSeconds = now / 1000;
  if (presented.expires !== null && nowSeconds > presented.expires + SKEW_SECONDS) return "expired";
  if (presented.created === null) return "too_old";
  if (presented.created > nowSeconds + SKEW_SECONDS) return "not_yet_valid";
  if (nowSeconds - presented.created > MAX_AGE_SECONDS + SKEW_SECONDS) return "too_old";
  return null;
}

/**
 * Whether the verified HTTP key is the mandate's and the card's key (`same_key`), a key of the
 * same registered agent (`same_agent`), or neither (`mismatch`); `absent` with nothing to bind
 * to. A key the org has not registered is bound by identity alone: unless it is the mandate's
 * own key, it is not shown to be the mandate's agent, which is a mismatch.
 */
export function bindingOf(
  httpKey: string,
  registered: RegisteredHttpKey | null,
  targets: BindingTargets,
): AgentBinding {
  const { mandateKey, mandateAgent, cardAgent } = targets;
  if (mandateKey === null && cardAgent === null) return "absent";
  const httpAgent = registered?.status === "active" ? registered.agent_id : null;
  const keyMatches = mandateKey === null || mandateKey === httpKey;
  const cardMatches = cardAgent === null || (cardAgent === httpAgent && registered?.signs_card);
  if (keyMatches && cardMatches) return "same_key";
  if (
    httpAgent !== null &&
    (mandateKey === null || mandateAgent === httpAgent) &&
    (cardAgent === null || cardAgent === httpAgent)
  ) {
    return "same_agent";
  }
  return "mismatch";
}
