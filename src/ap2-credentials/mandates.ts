/**
 * The four AP2 v0.2 mandate types by their exact `vct` (version suffix included; the unsuffixed
 * spellings in the schemas' descriptions are wrong), and the closed payment mandate read as the
 * constraints need it.
 *
 * Kept apart from src/assess/ap2.ts, whose zod schemas come from @hono/zod-openapi: this module
 * must not load Hono.
 */
import { type Claims, isClaims, own, safeInteger, text } from "./claims";
import { refuse } from "./failures";

export type MandateKind = "payment" | "checkout";

export const VCT = {
  openPayment: "mandate.payment.open.1",
  openCheckout: "mandate.checkout.open.1",
  payment: "mandate.payment.1",
  checkout: "mandate.checkout.1",
} as const;

/** What a `vct` names: its kind and whether it is an open mandate; null if it is none of four. */
export function mandateType(vct: unknown): { kind: MandateKind; open: boolean } | null {
  switch (vct) {
    case VCT.openPayment:
      return { kind: "payment", open: true };
    case VCT.openCheckout:
      return { kind: "checkout", open: true };
    case VCT.payment:
      return { kind: "payment", open: false };
    case VCT.checkout:
      return { kind: "checkout", open: false };
    default:
      return null;
  }
}

/** A closed payment mandate (mandate.payment.1) with the fields its schema requires. */
export interface ClosedPayment {
  transactionId: string;
  payee: Claims;
  amount: number;
  currency: string;
  instrument: Claims;
  pisp: Claims | undefined;
  executionDate: string | undefined;
  mandate: Claims;
}

const CURRENCY = /^[A-Z]{3}$/;

/** Amount objects (types/amount.json): a non-negative safe integer of minor units, a currency. */
export function readAmount(value: unknown): { amount: number; currency: string } | undefined {
  if (!isClaims(value)) return undefined;
  const amount = safeInteger(own(value, "amount"));
  const currency = text(own(value, "currency"));
  if (amount === undefined || amount < 0 || currency === undefined || !CURRENCY.test(currency)) {
    return undefined;
  }
  return { amount, currency };
}

function badPayment(message: string): never {
  refuse("constraint_violated", message, VCT.payment);
}

/** Throws `constraint_violated` naming the schema when a field the constraints read is unusable. */
export function readClosedPayment(mandate: Claims): ClosedPayment {
  const transactionId = text(own(mandate, "transaction_id"));
  if (!transactionId) badPayment("transaction_id must be a non-empty string");
  const payee = own(mandate, "payee");
  if (!isMerchant(payee)) badPayment("payee must be a merchant object");
  const amount = readAmount(own(mandate, "payment_amount"));
  if (!amount) {
    badPayment("payment_amount must be {amount: non-negative integer, currency: ISO 4217}");
  }
  const instrument = own(mandate, "payment_instrument");
  if (!isClaims(instrument) || !text(own(instrument, "id"))) {
    badPayment("payment_instrument must be an object with a string id");
  }
  const pisp = own(mandate, "pisp");
  if (pisp !== undefined && !isClaims(pisp)) badPayment("pisp must be an object");
  const executionDate = own(mandate, "execution_date");
  if (executionDate !== undefined && typeof executionDate !== "string") {
    badPayment("execution_date must be a string");
  }
  return {
    transactionId,
    payee,
    amount: amount.amount,
    currency: amount.currency,
    instrument,
    pisp,
    executionDate,
    mandate,
  };
}

/** types/merchant.json: an object whose `id`, `name` and `website`, when present, are strings. */
export function isMerchant(value: unknown): value is Claims {
  return (
    isClaims(value) &&
    ["id", "name", "website"].every((m) => ["undefined", "string"].includes(typeof own(value, m)))
  );
}

/**
 * The SDK's `merchant_matches`: by `id` when both have one, otherwise by `name` and `website`
 * together, both non-empty.
 */
export function merchantMatches(allowed: Claims, merchant: Claims): boolean {
  const [a, b] = [text(own(allowed, "id")), text(own(merchant, "id"))];
  if (a && b) return a === b;
  const name = text(own(allowed, "name"));
  const website = text(own(allowed, "website"));
  return (
    !!name &&
    !!website &&
    name === text(own(merchant, "name")) &&
    website === text(own(merchant, "website"))
  );
}
