/**
 * The closed mandate within every open hop's constraints (the vectors' README, "Open mandate ->
 * closed mandate"): each open hop, root first, its pre-set claims then its constraints in
 * order; the first violation refuses the chain as `constraint_violated`, naming the constraint.
 * A constraint that is not an object with a `type` AP2 v0.2 defines for the mandate's kind is a
 * violation: an unknown constraint never passes.
 */
import { CHECKOUT_CHECKS, checkoutOf } from "./checkout-constraints";
import { type Claims, isClaims, own } from "./claims";
import { textDigest } from "./disclosures";
import { refuse } from "./failures";
import { type ClosedPayment, type MandateKind, readClosedPayment } from "./mandates";
import { PAYMENT_CHECKS, presetViolation } from "./payment-constraints";

export interface ConstraintInputs {
  /** The merchant's checkout JWT the presentation is for, if the caller has it. */
  checkoutJwt: string | undefined;
  /** The open checkout mandate's hash, for `payment.reference`. */
  openCheckoutHash: string | undefined;
  /** Unix seconds. */
  now: number;
}

function constraintList(open: Claims): Claims[] {
  const list = own(open, "constraints");
  if (
    !Array.isArray(list) ||
    !list.every((c) => isClaims(c) && typeof own(c, "type") === "string")
  ) {
    refuse("constraint_violated", "constraints must be objects with a type", "constraints");
  }
  return list as Claims[];
}

function checkEach<T, C>(
  open: Claims,
  checks: Record<string, (constraint: Claims, subject: T, context: C) => string | null>,
  subject: T,
  context: C,
): void {
  for (const constraint of constraintList(open)) {
    const type = own(constraint, "type") as string;
    const check = Object.hasOwn(checks, type) ? checks[type] : undefined;
    const violation = check ? check(constraint, subject, context) : `${UNKNOWN_CONSTRAINT} ${type}`;
    if (violation !== null) refuse("constraint_violated", violation, type);
  }
}

/** How a refusal names a constraint type the verifier does not know (AP2's `unresolved_constraint`). */
export const UNKNOWN_CONSTRAINT = "unknown constraint type";

/**
 * Checks a closed payment mandate against its open hops; answers it read as a payment. With a
 * `checkoutJwt`, `transaction_id` must be its hash.
 */
export function checkPayment(
  opens: Claims[],
  mandate: Claims,
  inputs: ConstraintInputs,
): ClosedPayment {
  const closed = readClosedPayment(mandate);
  if (inputs.checkoutJwt !== undefined && closed.transactionId !== textDigest(inputs.checkoutJwt)) {
    refuse(
      "constraint_violated",
      "transaction_id is not the checkout JWT's hash",
      "transaction_id",
    );
  }
  for (const open of opens) {
    const preset = presetViolation(open, closed);
    if (preset) refuse("constraint_violated", preset[1], preset[0]);
    const context = { open, now: inputs.now, openCheckoutHash: inputs.openCheckoutHash };
    checkEach(open, PAYMENT_CHECKS, closed, context);
  }
  return closed;
}

/** Checks the checkout a closed checkout mandate commits to against its open hops. */
export function checkCheckout(opens: Claims[], mandate: Claims, inputs: ConstraintInputs): void {
  const checkout = checkoutOf(mandate, inputs.checkoutJwt);
  for (const open of opens) checkEach(open, CHECKOUT_CHECKS, checkout, undefined);
}

export function checkConstraints(
  kind: MandateKind,
  opens: Claims[],
  mandate: Claims,
  inputs: ConstraintInputs,
): ClosedPayment | null {
  if (kind === "payment") return checkPayment(opens, mandate, inputs);
  checkCheckout(opens, mandate, inputs);
  return null;
}
