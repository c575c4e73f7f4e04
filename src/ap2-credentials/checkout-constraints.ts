/**
 * A closed checkout mandate and the checkout it names: the merchant-issued checkout JWT must
 * hash to the mandate's `checkout_hash`, and the checkout must satisfy every open checkout
 * mandate's constraints (open_checkout_mandate.json `$defs`).
 *
 * Like the SDK, the checkout JWT's merchant signature is not checked here: its payload is read
 * as the checkout that `checkout_hash` commits the user's agent to.
 */
import { type Claims, isClaims, jsonOfBase64url, own, text } from "./claims";
import type { CheckoutConstraintType } from "./constraint-types";
import { textDigest } from "./disclosures";
import { refuse } from "./failures";
import { lineItemsViolation } from "./line-items";
import { isMerchant, merchantMatches, VCT } from "./mandates";

type Check = (constraint: Claims, checkout: Claims) => string | null;

const allowedMerchants: Check = (c, checkout) => {
  const allowed = own(c, "allowed");
  if (!Array.isArray(allowed) || !allowed.every(isMerchant)) return "allowed is malformed";
  // docs/ap2/checkout_mandate.md: no revealed element makes the constraint invalid.
  if (allowed.length === 0) return "allowed has no disclosed entry";
  const merchant = own(checkout, "merchant");
  if (!isMerchant(merchant)) return "the checkout names no merchant";
  return allowed.some((m) => merchantMatches(m, merchant)) ? null : "merchant is not allowed";
};

/** Every checkout constraint type AP2 v0.2 defines; any other type is a violation. */
export const CHECKOUT_CHECKS: Record<CheckoutConstraintType, Check> = {
  "checkout.allowed_merchants": allowedMerchants,
  "checkout.line_items": lineItemsViolation,
};

/**
 * The checkout the closed mandate commits to: the presented `checkout_jwt` if there is one,
 * otherwise the one the mandate discloses. Both present must be the same; either way
 * `checkout_hash` must be base64url(SHA-256(checkout JWT)). Throws `constraint_violated`.
 */
export function checkoutOf(closed: Claims, presented: string | undefined): Claims {
  const hash = text(own(closed, "checkout_hash"));
  const disclosed = own(closed, "checkout_jwt");
  if (!hash || (disclosed !== undefined && typeof disclosed !== "string")) {
    refuse("constraint_violated", "checkout_hash and checkout_jwt must be strings", VCT.checkout);
  }
  const disclosedJwt = typeof disclosed === "string" ? disclosed : undefined;
  if (presented !== undefined && disclosedJwt !== undefined && presented !== disclosedJwt) {
    refuse("constraint_violated", "the mandate discloses another checkout JWT", "checkout_hash");
  }
  const jwt = presented ?? disclosedJwt;
  if (jwt === undefined) {
    refuse(
      "constraint_violated",
      "no checkout JWT to check checkout_hash against",
      "checkout_hash",
    );
  }
  if (textDigest(jwt) !== hash) {
    refuse("constraint_violated", "checkout_hash is not the checkout JWT's hash", "checkout_hash");
  }
  const parts = jwt.split(".");
  let payload: unknown;
  try {
    payload = parts.length === 3 ? jsonOfBase64url(parts[1] as string) : undefined;
  } catch {
    payload = undefined;
  }
  if (!isClaims(payload)) {
    refuse("constraint_violated", "checkout_jwt has no JSON object payload", "checkout_jwt");
  }
  return payload;
}
