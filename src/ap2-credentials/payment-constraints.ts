/**
 * An open payment mandate's constraints over the closed payment mandate (AP2 v0.2,
 * open_payment_mandate.json `$defs`; the SDK's sdk/constraints.py). Each check answers a
 * violation message or null; a constraint whose own fields are malformed is a violation too.
 */
import { canonicalize } from "#audit/canonical";
import { type Claims, has, isClaims, own, safeInteger, text } from "./claims";
import type { PaymentConstraintType } from "./constraint-types";
import { type ClosedPayment, isMerchant, merchantMatches, readAmount } from "./mandates";
import { readCap } from "./period-caps";
import { budgetMaxMinor } from "./spend";

export interface PaymentContext {
  /** The open mandate the constraint belongs to. */
  open: Claims;
  /** Verification time, unix seconds: when a payment without `execution_date` executes. */
  now: number;
  /** The hash of the open checkout mandate a `payment.reference` must name, if known. */
  openCheckoutHash: string | undefined;
}

type Check = (constraint: Claims, closed: ClosedPayment, context: PaymentContext) => string | null;

/** AP2 v0.2 `payment.agent_recurrence` frequencies (the decoded-JSON schema reads them too). */
export const RECURRENCE_FREQUENCIES = [
  "ON_DEMAND",
  "DAILY",
  "WEEKLY",
  "BIWEEKLY",
  "MONTHLY",
  "QUARTERLY",
  "ANNUALLY",
] as const;

function allowedList(constraint: Claims, accept: (entry: unknown) => boolean): Claims[] | string {
  const allowed = own(constraint, "allowed");
  if (!Array.isArray(allowed) || !allowed.every(accept)) return "allowed is malformed";
  if (allowed.length === 0) return "allowed has no disclosed entry";
  return allowed as Claims[];
}

function hasConstraint(open: Claims, type: string): boolean {
  const list = own(open, "constraints");
  return Array.isArray(list) && list.some((c) => isClaims(c) && own(c, "type") === type);
}

const amountRange: Check = (c, closed) => {
  const currency = text(own(c, "currency"));
  const max = safeInteger(own(c, "max"));
  const min = own(c, "min") === undefined ? undefined : safeInteger(own(c, "min"));
  if (!currency || max === undefined || (has(c, "min") && min === undefined)) {
    return "currency and integer max (and min) are required";
  }
  if (closed.currency !== currency) return `currency ${closed.currency} is not ${currency}`;
  if (min !== undefined && closed.amount < min) return `amount ${closed.amount} is below ${min}`;
  if (closed.amount > max) return `amount ${closed.amount} exceeds ${max}`;
  return null;
};

const budget: Check = (c, closed) => {
  const currency = text(own(c, "currency"));
  const maxMinor = budgetMaxMinor(own(c, "max"));
  if (!currency || maxMinor === undefined) return "currency and a non-negative max are required";
  if (closed.currency !== currency) return `currency ${closed.currency} is not ${currency}`;
  if (closed.amount > maxMinor) {
    return `amount ${closed.amount} alone exceeds the budget of ${maxMinor} (max × 100)`;
  }
  return null;
};

/** One payment alone within the period cap; the sum within the period is the Durable Object's. */
const cumulative: Check = (c, closed) => {
  const cap = readCap(c);
  if (typeof cap === "string") return cap;
  if (closed.currency !== cap.currency) return `currency ${closed.currency} is not ${cap.currency}`;
  if (closed.amount > cap.maxMinor) {
    return `amount ${closed.amount} alone exceeds the ${cap.period} cap of ${cap.maxMinor}`;
  }
  return null;
};

const agentRecurrence: Check = (c, _closed, { open }) => {
  if (!(RECURRENCE_FREQUENCIES as readonly string[]).includes(own(c, "frequency") as string))
    return "frequency is not one of AP2's";
  const max = own(c, "max_occurrences");
  if (max !== undefined && (safeInteger(max) ?? 0) < 1) return "max_occurrences allows no payment";
  // As the SDK: a recurring mandate must bound each payment and their sum.
  if (!hasConstraint(open, "payment.amount_range")) return "requires payment.amount_range";
  if (!hasConstraint(open, "payment.budget")) return "requires payment.budget";
  return null;
};

const allowedPayees: Check = (c, closed) => {
  const allowed = allowedList(c, isMerchant);
  if (typeof allowed === "string") return allowed;
  return allowed.some((m) => merchantMatches(m, closed.payee)) ? null : "payee is not allowed";
};

const allowedInstruments: Check = (c, closed) => {
  const allowed = allowedList(c, (e) => isClaims(e) && typeof own(e, "id") === "string");
  if (typeof allowed === "string") return allowed;
  const id = own(closed.instrument, "id");
  return allowed.some((i) => own(i, "id") === id) ? null : `instrument ${id} is not allowed`;
};

const PISP_FIELDS = ["legal_name", "brand_name", "domain_name"];

const allowedPisps: Check = (c, closed) => {
  const isPisp = (e: unknown) =>
    isClaims(e) && PISP_FIELDS.every((f) => typeof own(e, f) === "string");
  const allowed = allowedList(c, isPisp);
  if (typeof allowed === "string") return allowed;
  const pisp = closed.pisp;
  if (!pisp) return "the closed mandate names no pisp";
  const same = (a: Claims) => PISP_FIELDS.every((f) => own(a, f) === own(pisp, f));
  return allowed.some(same) ? null : "pisp is not allowed";
};

const DAY_MS = 86_400_000;
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/;

/** An ISO 8601 date (the whole UTC day) or date-time with offset, as [first, last] ms. */
function period(value: string): [number, number] | undefined {
  const date = DATE.exec(value);
  if (date) {
    const [y, m, d] = date.slice(1).map(Number) as [number, number, number];
    const start = Date.UTC(y, m - 1, d);
    const exact = new Date(start).toISOString().startsWith(value);
    return exact ? [start, start + DAY_MS - 1] : undefined;
  }
  const instant = DATE_TIME.test(value) ? Date.parse(value) : Number.NaN;
  return Number.isNaN(instant) ? undefined : [instant, instant];
}

/**
 * Read as dates, not compared as text (the SDK compares the strings); a payment without
 * `execution_date` executes now (the schema: "absent indicates immediate execution").
 */
const executionDate: Check = (c, closed, { now }) => {
  const bound = (name: string) => {
    const value = own(c, name);
    return value === undefined ? null : typeof value === "string" ? period(value) : undefined;
  };
  const [notBefore, notAfter] = [bound("not_before"), bound("not_after")];
  if (notBefore === undefined || notAfter === undefined) return "bounds must be ISO 8601 dates";
  const when: [number, number] | undefined =
    closed.executionDate === undefined ? [now * 1000, now * 1000] : period(closed.executionDate);
  if (!when) return `execution_date ${closed.executionDate} is not an ISO 8601 date`;
  if (notBefore && when[0] < notBefore[0]) return "execution is before not_before";
  if (notAfter && when[1] > notAfter[1]) return "execution is after not_after";
  return null;
};

const reference: Check = (c, _closed, { openCheckoutHash }) => {
  const expected = text(own(c, "conditional_transaction_id"));
  if (!expected) return "conditional_transaction_id is required";
  if (openCheckoutHash === undefined) return "needs the open checkout mandate's hash to check";
  return openCheckoutHash === expected ? null : "the open checkout mandate's hash differs";
};

/**
 * Every payment constraint type AP2 v0.2 defines, and `payment.cumulative` (an extension); any
 * other type is a violation.
 */
export const PAYMENT_CHECKS: Record<PaymentConstraintType, Check> = {
  "payment.amount_range": amountRange,
  "payment.budget": budget,
  "payment.cumulative": cumulative,
  "payment.agent_recurrence": agentRecurrence,
  "payment.allowed_payees": allowedPayees,
  "payment.allowed_payment_instruments": allowedInstruments,
  "payment.allowed_pisps": allowedPisps,
  "payment.execution_date": executionDate,
  "payment.reference": reference,
};

const same = (a: unknown, b: unknown) => b !== undefined && canonicalize(a) === canonicalize(b);

/**
 * Claims an open payment mandate pre-sets must reappear unchanged in the closed one: the SDK's
 * four (payee by merchant match, amount, instrument, execution date) and `pisp`. Answers the
 * first claim that differs as [constraint, message].
 */
export function presetViolation(open: Claims, closed: ClosedPayment): [string, string] | null {
  const payee = own(open, "payee");
  if (payee !== undefined && !(isMerchant(payee) && merchantMatches(payee, closed.payee))) {
    return ["preset.payee", "the payee differs from the one pre-set"];
  }
  const amount = own(open, "payment_amount");
  if (
    amount !== undefined &&
    (!readAmount(amount) || !same(amount, own(closed.mandate, "payment_amount")))
  ) {
    return ["preset.payment_amount", "the amount differs from the one pre-set"];
  }
  for (const name of ["payment_instrument", "pisp", "execution_date"]) {
    const value = own(open, name);
    if (value !== undefined && !same(value, own(closed.mandate, name))) {
      return [`preset.${name}`, `${name} differs from the one pre-set`];
    }
  }
  return null;
}
