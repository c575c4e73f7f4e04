import { z } from "@hono/zod-openapi";
import { compactVerify } from "jose";
import { logIdFor } from "#audit/checkpoint";
import { base64url, fromBase64url } from "#audit/encoding";
import type { StoredEntry } from "../ledger/ledger-store";
import { COMPACT_JWS_PATTERN, Hex64, RECEIPT_ISSUER, ReceiptClaims } from "../schemas/artifacts";
import type { PublicSigningKey, Signer } from "../signing/signer";

/** The JWS `typ` of an artifact receipt. */
export const ARTIFACT_RECEIPT_TYP = "artifact-receipt+jwt";

/** What a receipt is made of: the registration and the ledger entry that recorded it. */
export interface ReceiptFacts {
  artifactId: string;
  orgId: string;
  livemode: boolean;
  digest: string;
  registeredAt: Date;
}

/**
 * The claims of a receipt, a pure function of the registration and its entry: every caller
 * that finishes the same registration (a racing duplicate) signs the same bytes, and Ed25519
 * signatures are deterministic, so they all store the same receipt.
 */
export function receiptClaims(facts: ReceiptFacts, entry: StoredEntry): ReceiptClaims {
  return {
    iss: RECEIPT_ISSUER,
    sub: facts.artifactId,
    org: facts.orgId,
    livemode: facts.livemode,
    digest: facts.digest,
    iat: Math.floor(facts.registeredAt.getTime() / 1000),
    registered_at: facts.registeredAt.toISOString(),
    log_id: logIdFor(facts.orgId),
    entry: {
      id: entry.id,
      sequence: entry.sequence,
      hash: entry.hash,
      leaf_hash: entry.leaf_hash,
    },
  };
}

export function signArtifactReceipt(
  key: Signer,
  facts: ReceiptFacts,
  entry: StoredEntry,
): Promise<string> {
  return key.signClaims(receiptClaims(facts, entry), ARTIFACT_RECEIPT_TYP);
}

export type KeyStatus = "current" | "retired" | "unknown";

export type ReceiptProblem =
  | "malformed_receipt"
  | "unknown_key"
  | "signature_invalid"
  | "not_a_receipt";

/** What the signature alone says about a receipt, before the ledger is consulted. */
export interface ReceiptCheck {
  signature_valid: boolean;
  kid: string | null;
  key_status: KeyStatus;
  /** Only once the signature verifies: unverified claims are never shown as facts. */
  claims: ReceiptClaims | null;
  problem: { code: ReceiptProblem; message: string } | null;
}

/**
 * Each part decodes and re-encodes to itself: unpadded base64url whose last character carries
 * no stray bits. A lenient decoder maps several spellings to the same bytes; a receipt has one.
 */
function canonicalParts(jws: string): boolean {
  return jws.split(".").every((part) => {
    try {
      return base64url(fromBase64url(part)) === part;
    } catch {
      return false;
    }
  });
}

function decodeHeader(jws: string): Record<string, unknown> | null {
  try {
    const header = JSON.parse(new TextDecoder().decode(fromBase64url(jws.split(".")[0] ?? "")));
    return header !== null && typeof header === "object" && !Array.isArray(header)
      ? (header as Record<string, unknown>)
      : null;
  } catch {
    return null;
  }
}

/**
 * Checks a receipt against the published key set (the current key first, then retired keys):
 * the header names a key of the set, `alg` EdDSA, no `crit`, the Ed25519 signature verifies,
 * `typ` is `artifact-receipt+jwt` and the claims have exactly the receipt's shape. A retired
 * key still published verifies what it signed while current.
 */
export async function checkReceipt(keys: PublicSigningKey[], jws: string): Promise<ReceiptCheck> {
  const header = decodeHeader(jws);
  const fail = (
    code: ReceiptProblem,
    message: string,
    kid: string | null = null,
    status: KeyStatus = "unknown",
  ): ReceiptCheck => ({
    signature_valid: false,
    kid,
    key_status: status,
    claims: null,
    problem: { code, message },
  });
  if (!COMPACT_JWS_PATTERN.test(jws) || !canonicalParts(jws)) {
    return fail("malformed_receipt", "a part is not canonical unpadded base64url");
  }
  if (header === null) {
    return fail("malformed_receipt", "not a compact JWS with a JSON protected header");
  }
  const kid = typeof header.kid === "string" ? header.kid : null;
  const index = keys.findIndex((k) => k.kid === kid);
  const key = keys[index];
  if (kid === null || !key) {
    return fail("unknown_key", "the receipt names no key of the published key set", kid);
  }
  const status: KeyStatus = index === 0 ? "current" : "retired";
  let payload: Uint8Array;
  try {
    if (header.alg !== "EdDSA" || "crit" in header) throw new Error("unsupported header");
    ({ payload } = await compactVerify(jws, key, { algorithms: ["EdDSA"] }));
  } catch {
    return fail("signature_invalid", "the signature does not verify", kid, status);
  }
  const parsed = parseClaims(payload);
  if (header.typ !== ARTIFACT_RECEIPT_TYP || parsed === null) {
    return {
      signature_valid: true,
      kid,
      key_status: status,
      claims: null,
      problem: {
        code: "not_a_receipt",
        message: "signed by this service, but not an artifact receipt",
      },
    };
  }
  return { signature_valid: true, kid, key_status: status, claims: parsed, problem: null };
}

function parseClaims(payload: Uint8Array): ReceiptClaims | null {
  try {
    const result = ReceiptClaims.safeParse(JSON.parse(new TextDecoder().decode(payload)));
    return result.success ? result.data : null;
  } catch {
    return null;
  }
}

const StoredLeaf = z.object({ entry: z.object({ leaf_hash: Hex64 }) });

/**
 * The leaf hash named by a receipt this service stored itself (read from its own row, not
 * verified), parsed leniently: only the one field needed, null if even that is unreadable, so
 * a receipt of an older shape never turns a public answer into an error.
 */
export function storedLeafHash(jws: string): string | null {
  try {
    const payload = JSON.parse(new TextDecoder().decode(fromBase64url(jws.split(".")[1] ?? "")));
    const parsed = StoredLeaf.safeParse(payload);
    return parsed.success ? parsed.data.entry.leaf_hash : null;
  } catch {
    return null;
  }
}
