import { CHECKPOINT_TYP } from "#audit/checkpoint";
import { GRANT_TYP, PACK_TYP, RECEIPT_TYP } from "../action/grant";
import { MANDATE_BUDGET_TYP } from "../ap2-credentials/budget-attestation";
import { MANDATE_RECEIPT_TYP } from "../assess/mandate-receipt";
import { ACP_SIGNALS_TYP } from "../assess/rails/acp";
import { RISK_CHECK_TYP } from "../assess/rails/x402";
import { RISK_PAYLOAD_TYP } from "../assess/risk-payload";
import { publicBatch } from "../auth/tenant";
import { REPORT_TYP } from "../control-coverage/report";
import { signingKeys } from "../db/schema";
import type { Env } from "../env";
import { MODEL_CARD_TYP } from "../risk-models/card";
import type { PublishedKey, Signer } from "../signing/signer";
import { STATUS_LIST_TYP } from "../status-lists/token";
import { WEBHOOK_TYP } from "../webhooks/deliver";
import { ARTIFACT_RECEIPT_TYP } from "./artifact-receipt";

/** The JWS `typ` of the signed trust list. */
export const TRUST_LIST_TYP = "trust-list+jwt";

/** How long a trust list may be relied on after `issued_at`. */
export const TRUST_LIST_LIFETIME_MS = 24 * 60 * 60 * 1000;

/**
 * What the service's key signs, by JWS `typ`, from the constants the signing modules use
 * (test/node checks this list against every `typ` the service's key signs in src/):
 * every key signed all of them while current, so a retired key verifies the same kinds of
 * payload it signed then.
 */
export const KEY_PURPOSES = [
  RISK_PAYLOAD_TYP,
  GRANT_TYP,
  RECEIPT_TYP,
  PACK_TYP,
  ARTIFACT_RECEIPT_TYP,
  REPORT_TYP,
  CHECKPOINT_TYP,
  WEBHOOK_TYP,
  TRUST_LIST_TYP,
  MODEL_CARD_TYP,
] as const;

/**
 * What the ES256 key signs, by JWS `typ` (issue 42's ADR): the artefacts a verifier without
 * EdDSA must check. test/node holds it against every `es256.signClaims` in src/.
 */
export const ES256_KEY_PURPOSES = [
  MANDATE_RECEIPT_TYP,
  STATUS_LIST_TYP,
  MANDATE_BUDGET_TYP,
  RISK_CHECK_TYP,
  ACP_SIGNALS_TYP,
] as const;

/** A key's window as the Cron sweep noted it in `signing_keys`. */
export interface NotedKey {
  kid: string;
  firstSeenAt: Date;
  retiredAt: Date | null;
}

export interface TrustedKey {
  kid: string;
  jwk: PublishedKey;
  status: "current" | "retired";
  valid_from: string | null;
  valid_until: string | null;
  purposes: string[];
}

/**
 * The published keys (the current Ed25519 and ES256 keys first, then retired ones still
 * published), each with the window the sweep noted: `valid_from` when it was first seen current
 * (null if not yet noted; the sweep notes the Ed25519 key), `valid_until` when another key
 * replaced it (always null for a current key: it signs now, whatever the table says before the
 * next sweep), and what it signs by its `alg`. A noted key no longer published is not trusted
 * and is left out.
 */
export function trustedKeys(
  key: Pick<Signer, "kid" | "es256" | "published">,
  noted: NotedKey[],
): TrustedKey[] {
  const windows = new Map(noted.map((k) => [k.kid, k]));
  return key.published.map((jwk) => {
    const window = windows.get(jwk.kid);
    const current = jwk.kid === key.kid || jwk.kid === key.es256.kid;
    return {
      kid: jwk.kid,
      jwk,
      status: current ? "current" : "retired",
      valid_from: window?.firstSeenAt.toISOString() ?? null,
      valid_until: current ? null : (window?.retiredAt?.toISOString() ?? null),
      purposes: jwk.alg === "ES256" ? [...ES256_KEY_PURPOSES] : [...KEY_PURPOSES],
    };
  });
}

/**
 * Where a verifier finds the rest: paths relative to `issuer` (templates in braces), so the
 * signed list names no host but the issuer's.
 */
export const TRANSPARENCY_LINKS = {
  key_set: "/.well-known/jwks.json",
  logs: "/v1/transparency/logs/{log_id}",
  checkpoints: "/v1/transparency/logs/{log_id}/checkpoints",
  consistency: "/v1/transparency/logs/{log_id}/consistency?first={first}&second={second}",
  proofs: "/v1/transparency/proofs/{leaf_hash}",
  verify_artifact: "/v1/verify/artifact",
} as const;

/** When each signing key was first seen and retired, as the service noted them (public). */
export async function notedKeys(env: Env): Promise<NotedKey[]> {
  const [noted] = await publicBatch(env, {}, (db) => [
    db
      .select({
        kid: signingKeys.kid,
        firstSeenAt: signingKeys.firstSeenAt,
        retiredAt: signingKeys.retiredAt,
      })
      .from(signingKeys),
  ]);
  return noted;
}
