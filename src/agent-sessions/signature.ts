import { flattenedVerify, type JWK } from "jose";
import { base64url, fromBase64url } from "#audit/encoding";
import { SIGNATURE_ALGS, verificationKey } from "../identity/public-jwk";
import type { BreakReason } from "../schemas/vocabulary";

/** An agent key as the chain check needs it, with its agent's revocation. */
export interface SessionKey {
  thumbprint: string;
  agentId: string;
  jwk: Record<string, string>;
  alg: string;
  status: "active" | "revoked";
  revokedAt: Date | null;
  /** When the key's agent was revoked: every key of a revoked agent counts as revoked then. */
  agentRevokedAt: Date | null;
}

export interface SignatureProblem {
  reason: BreakReason;
  expected?: unknown;
  actual?: unknown;
}

// RFC 7515 Appendix F: a compact JWS with the payload left out.
const DETACHED = /^([A-Za-z0-9_-]+)\.\.([A-Za-z0-9_-]+)$/;
/** The base64url protected header: `{alg, kid, typ?}` needs far less. */
export const MAX_HEADER_LENGTH = 512;
/** An RFC 7638 SHA-256 thumbprint, base64url: what agent keys are named by. */
export const KID = /^[A-Za-z0-9_-]{43}$/;
const HEADER_MEMBERS = new Set(["alg", "kid", "typ"]);

/** The `kid` a detached JWS names, or null when it is not one this service reads. */
export function signatureKid(signature: string): string | null {
  const header = protectedHeader(signature);
  return header && typeof header.kid === "string" && KID.test(header.kid) ? header.kid : null;
}

function protectedHeader(signature: string): Record<string, unknown> | null {
  const match = DETACHED.exec(signature);
  if (!match?.[1] || match[1].length > MAX_HEADER_LENGTH) return null;
  try {
    const header: unknown = JSON.parse(new TextDecoder().decode(fromBase64url(match[1])));
    return typeof header === "object" && header !== null && !Array.isArray(header)
      ? (header as Record<string, unknown>)
      : null;
  } catch {
    return null;
  }
}

/** Imported verification keys by thumbprint, so each key is imported once per request. */
export type KeyCache = Map<string, Promise<CryptoKey>>;

/**
 * Verifies a detached compact JWS over the canonical event with the agent's registered key the
 * header's `kid` names. The key must be the session agent's, and neither it nor its agent
 * revoked: now (at ingestion), or at `receivedAt` (re-verifying a stored event: a revocation
 * after the event arrived does not undo what the key signed while valid). Answers the problem,
 * or null when the signature holds.
 */
export async function checkSignature(
  signature: string,
  canonical: string,
  rules: { agentId: string; keys: ReadonlyMap<string, SessionKey>; cache?: KeyCache },
  receivedAt?: Date,
): Promise<SignatureProblem | null> {
  const header = protectedHeader(signature);
  const [encodedHeader, , encodedSignature] = signature.split(".");
  if (!header || !encodedHeader || !encodedSignature) return { reason: "signature_malformed" };
  const { alg, kid } = header;
  if (typeof alg !== "string" || !SIGNATURE_ALGS.has(alg) || typeof kid !== "string") {
    return { reason: "signature_malformed", actual: { alg, kid } };
  }
  if (!KID.test(kid)) return { reason: "signature_malformed", actual: { kid } };
  // Only these: `crit`, `b64` and the rest would change what the signature covers or means.
  const extra = Object.keys(header).filter((name) => !HEADER_MEMBERS.has(name));
  if (extra.length > 0) return { reason: "signature_malformed", actual: { members: extra } };
  const key = rules.keys.get(kid);
  if (!key) return { reason: "unknown_key", actual: kid };
  if (key.agentId !== rules.agentId) {
    return { reason: "key_not_of_agent", expected: rules.agentId, actual: key.agentId };
  }
  const before = (at: Date | null) => at !== null && (receivedAt === undefined || at <= receivedAt);
  if (before(key.agentRevokedAt)) return { reason: "agent_revoked", actual: key.agentId };
  const keyRevoked =
    key.status === "revoked" && (receivedAt === undefined || (key.revokedAt ?? 0) <= receivedAt);
  if (keyRevoked) return { reason: "key_revoked", actual: kid };
  if (alg !== key.alg) return { reason: "signature_invalid", expected: key.alg, actual: alg };
  try {
    let imported = rules.cache?.get(kid);
    if (!imported) {
      imported = verificationKey(key.jwk as JWK, key.alg);
      rules.cache?.set(kid, imported);
    }
    const payload = base64url(new TextEncoder().encode(canonical));
    await flattenedVerify(
      { protected: encodedHeader, payload, signature: encodedSignature },
      await imported,
      { algorithms: [key.alg] },
    );
    return null;
  } catch {
    return { reason: "signature_invalid" };
  }
}
