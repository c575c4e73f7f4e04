import { compactVerify, decodeJwt } from "jose";
import type { Env } from "../env";
import { ApiError } from "../errors";
import { GRANT_ISSUER, GrantClaims } from "../schemas/actions";
import { signer } from "../signing/signer";
import type { RedemptionPayload } from "./records";

/** The JWS `typ` of a grant, of a redemption receipt and of an incident pack's signature. */
export const GRANT_TYP = "action-grant+jwt";
export const RECEIPT_TYP = "action-redemption+jwt";
export const PACK_TYP = "incident-pack+jws";

const ISSUER = GRANT_ISSUER;

/** How long a grant can be redeemed after it is issued. */
export const GRANT_TTL_SECONDS = 300;

/** A grant's `exp`: five minutes after it is issued, never beyond the mandate's own expiry. */
export function grantExpiresAt(now: Date, mandateExpiresAt: Date): Date {
  const iat = Math.floor(now.getTime() / 1000);
  const exp = Math.min(iat + GRANT_TTL_SECONDS, Math.floor(mandateExpiresAt.getTime() / 1000));
  return new Date(exp * 1000);
}

/**
 * Signs a grant: a compact JWS (EdDSA) with `typ: action-grant+jwt`, expiring at
 * `grantExpiresAt`. Its `status` claim, when given, names its place in the org's status list.
 */
export async function signGrant(
  env: Env,
  facts: Omit<GrantClaims, "iss" | "iat" | "exp">,
  now: Date,
  mandateExpiresAt: Date,
): Promise<{ jws: string; expiresAt: Date }> {
  const iat = Math.floor(now.getTime() / 1000);
  const expiresAt = grantExpiresAt(now, mandateExpiresAt);
  const claims: GrantClaims = { iss: ISSUER, ...facts, iat, exp: expiresAt.getTime() / 1000 };
  const jws = await (await signer(env)).signClaims(claims, GRANT_TYP);
  return { jws, expiresAt };
}

/**
 * The claims of a presented grant, trusted only after its signature verifies against the
 * service's own keys (current and retired; never a key named by the token itself) with the
 * grant `typ`.
 */
export async function verifyGrant(env: Env, jws: string): Promise<GrantClaims> {
  const { keys } = await signer(env);
  try {
    const verified = await compactVerify(
      jws,
      (header) => {
        const key = keys.find((k) => k.kid === header.kid);
        if (!key) throw new Error("unknown kid");
        return key;
      },
      { algorithms: ["EdDSA"] },
    );
    if (verified.protectedHeader.typ !== GRANT_TYP) throw new Error("not a grant");
    return GrantClaims.parse(JSON.parse(new TextDecoder().decode(verified.payload)));
  } catch {
    throw new ApiError("grant_invalid", [
      { path: "grant", message: "not a grant signed by this service" },
    ]);
  }
}

/** A grant is redeemable strictly before its `exp`. */
export function assertUnexpired(claims: GrantClaims, now: Date): void {
  if (Math.floor(now.getTime() / 1000) >= claims.exp) {
    throw new ApiError("grant_expired", [
      { path: "grant", message: `expired at ${new Date(claims.exp * 1000).toISOString()}` },
    ]);
  }
}

/** The claims of a grant this service issued (read from its own stored record, not verified). */
export function grantClaimsOf(jws: string): GrantClaims {
  return GrantClaims.parse(decodeJwt(jws));
}

/** The redemption receipt: the same facts as the redemption, signed. */
export async function signReceipt(
  env: Env,
  orgId: string,
  redemption: Omit<RedemptionPayload, "object" | "receipt_jws">,
): Promise<string> {
  const iat = Math.floor(new Date(redemption.redeemed_at).getTime() / 1000);
  const claims = { iss: ISSUER, sub: redemption.grant_id, org: orgId, iat, ...redemption };
  return (await signer(env)).signClaims(claims, RECEIPT_TYP);
}
