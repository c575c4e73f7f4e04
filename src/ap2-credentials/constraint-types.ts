/**
 * The constraint types an open mandate may carry, by kind: AP2 v0.2's (open_payment_mandate.json
 * and open_checkout_mandate.json `$defs`) and `payment.cumulative`, an extension the AP2 SDK does
 * not define (Verifiable Intent's period cap; docs/credentials.md, "Period caps"). The verifier
 * refuses any other type; an issuer's `required_constraints` names only these.
 */
export const PAYMENT_CONSTRAINT_TYPES = [
  "payment.agent_recurrence",
  "payment.allowed_payees",
  "payment.allowed_payment_instruments",
  "payment.allowed_pisps",
  "payment.amount_range",
  "payment.budget",
  "payment.cumulative",
  "payment.execution_date",
  "payment.reference",
] as const;

export const CHECKOUT_CONSTRAINT_TYPES = [
  "checkout.allowed_merchants",
  "checkout.line_items",
] as const;

export const CONSTRAINT_TYPES = [
  ...PAYMENT_CONSTRAINT_TYPES,
  ...CHECKOUT_CONSTRAINT_TYPES,
] as const;

export type PaymentConstraintType = (typeof PAYMENT_CONSTRAINT_TYPES)[number];
export type CheckoutConstraintType = (typeof CHECKOUT_CONSTRAINT_TYPES)[number];
export type ConstraintType = (typeof CONSTRAINT_TYPES)[number];
