/**
 * A signed Payment Receipt: its payload read from the compact JWS, and its signature checked
 * with the keys of the credential issuer its `iss` names (docs/credentials.md, "Payment
 * receipts"). AP2's `ReceiptClient.verify_receipt` takes "the receipt issuer's public key" and
 * leaves finding it to the caller; the service finds it among the org's credential issuers, by
 * the root's key rule (`anchorVerifying`).
 */
import type { z } from "@hono/zod-openapi";
import { base64UrlToBytes } from "#audit/encoding";
import { type Claims, isClaims, own } from "../ap2-credentials/claims";
import { anchorVerifying } from "../ap2-credentials/hops";
import { anchorsOf, type IssuerRow } from "../ap2-credentials/issuers";
import { SIGNATURE_ALGS } from "../ap2-credentials/keys";
import type { Tenant } from "../auth/tenant";
import { ApiError } from "../errors";
import { SignedReceiptPayload } from "../schemas/payment-receipts";
import { namesIssuer } from "./receipt-issuer";

/** A compact JWS read without any trust: its header and its payload's claims. */
export interface ReadReceipt {
  header: Claims;
  payload: Claims;
  /** The payload's receipt members, as checked. */
  fields: z.infer<typeof SignedReceiptPayload>;
}

function decoded(part: string): unknown {
  try {
    return JSON.parse(
      new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(base64UrlToBytes(part)),
    );
  } catch {
    return undefined;
  }
}

function unreadable(message: string): ApiError {
  return new ApiError("invalid_request", [{ path: "jws", message }]);
}

/**
 * The JWS's header and payload, the payload checked as a receipt (400 naming `jws.payload.<member>`
 * for each problem): what is recorded must be a Payment Receipt whoever signed it.
 */
export function readReceipt(jws: string): ReadReceipt {
  const [h = "", p = ""] = jws.split(".");
  const header = decoded(h);
  const payload = decoded(p);
  if (!isClaims(header)) throw unreadable("the JWS header is not a JSON object");
  if (!isClaims(payload)) throw unreadable("the JWS payload is not a JSON object");
  const checked = SignedReceiptPayload.safeParse(payload);
  if (!checked.success) {
    throw new ApiError(
      "invalid_request",
      checked.error.issues.map((issue) => ({
        path: ["jws", "payload", ...issue.path.map(String)].join("."),
        message: issue.message,
        code: issue.code,
      })),
    );
  }
  return { header, payload, fields: checked.data };
}

export type SignatureCheck =
  | { status: "verified"; issuerId: string }
  | { status: "unverified"; reason: "unknown_issuer" };

/**
 * Checks the signature with the keys of the active issuers `iss` names (`issuers`: the org's
 * active ones). None named: `unknown_issuer`, recorded unverified (the receipt may still be
 * evidence; nothing here can vouch for it). Named but no key of theirs verifies it: 400
 * `receipt_signature_invalid`, nothing recorded, as a payment provider's webhook with a bad
 * signature is refused: a receipt that claims an issuer the org trusts and fails its key is a
 * forgery or a corruption, never evidence.
 */
export async function checkSignature(
  tenant: Tenant,
  jws: string,
  read: ReadReceipt,
  issuers: IssuerRow[],
): Promise<SignatureCheck> {
  const iss = own(read.payload, "iss") as string;
  const named = issuers.filter((row) => namesIssuer(row, iss));
  if (named.length === 0) return { status: "unverified", reason: "unknown_issuer" };
  const alg = own(read.header, "alg");
  if (typeof alg !== "string" || !SIGNATURE_ALGS.includes(alg)) {
    throw invalidSignature(`alg ${String(alg)} is refused (ES256, EdDSA)`);
  }
  // A JWKS URL issuer's keys as the chain verifier trusts them now (a kid no cached key names
  // fetches the set again, at most once a minute).
  const anchors = await anchorsOf(tenant, tenant.env, named, read.header);
  const match = await anchorVerifying(jws, read.header, anchors);
  if (match) return { status: "verified", issuerId: match.issuerId };
  const kid = own(read.header, "kid");
  const which = named.map((row) => row.id).join(", ");
  throw invalidSignature(
    `no key${typeof kid === "string" ? ` with kid "${kid}"` : ""} of the credential issuer ` +
      `${which} (named by iss "${iss}") verifies the receipt`,
  );
}

function invalidSignature(message: string): ApiError {
  return new ApiError("receipt_signature_invalid", [{ path: "jws", message }]);
}
