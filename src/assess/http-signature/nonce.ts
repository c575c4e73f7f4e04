import { sha256 } from "#audit/digest";
import { toHex, utf8 } from "#audit/encoding";
import type { PresentedHttpSignature } from "./presented";
import { nonceExpiry } from "./verify";

/**
 * What the context read is asked about the agent's HTTP signature: the registered agent key its
 * `keyid` names (Web Bot Auth's `keyid` is the key's RFC 7638 thumbprint, the registry's key),
 * and its nonce, remembered in the same statement (docs/http-signatures.md, "Nonces").
 */
export type HttpSignatureQuery = {
  keyid: string | null;
  /** SHA-256 (hex) of `keyid` and the nonce; null without a nonce (nothing to remember). */
  nonceDigest: string | null;
  /** ISO time the nonce stops mattering (nonceExpiry). */
  nonceExpiresAt: string | null;
};

export function httpSignatureQuery(presented: PresentedHttpSignature): HttpSignatureQuery {
  const expiry = nonceExpiry(presented);
  const remember = expiry !== null && presented.nonce !== null;
  return {
    keyid: presented.keyid,
    nonceDigest: remember
      ? toHex(sha256(utf8(`${presented.keyid ?? ""}\n${presented.nonce}`)))
      : null,
    nonceExpiresAt: remember ? new Date(expiry).toISOString() : null,
  };
}
