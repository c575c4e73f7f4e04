import {
  type Amount,
  amountSchema,
  isUndisclosedElement,
  type Jwk,
  type Merchant,
  type OpenCheckoutConstraint,
  type OpenPaymentConstraint,
  type OpenPaymentMandate,
  type PaymentMandate,
  type UndisclosedElement,
  type ValidMandate,
} from "./ap2";
import type { Outcome } from "./outcome";

/**
 * MandateFacts: what policy, risk and know-your-agent read from a request, extracted once
 * from the validated mandate, and the service's own namespace in `risk_data`.
 */

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** An amount in ISO 4217 minor units. */
export type Money = Pick<Amount, "amount" | "currency">;

export interface Payee {
  id: string;
  name: string;
  website: string | null;
}

/** One allow-list constraint: the entries disclosed, and how many the holder kept undisclosed. */
export interface AllowedPayees {
  disclosed: Payee[];
  undisclosed: number;
}

/** The bounds of an open mandate. Every entry of each list is a constraint that must hold. */
export interface OpenMandateLimits {
  /** Each `payment.amount_range` maximum. */
  maxAmounts: Money[];
  /** Each `payment.allowed_payees` or `checkout.allowed_merchants` list. */
  allowedPayees: AllowedPayees[];
  /** All constraints, as the AP2 schema types them (recurrence, budget, line items...). */
  constraints: (OpenPaymentConstraint | OpenCheckoutConstraint)[];
}

/**
 * The facts later stages read, null where the mandate does not state them. Read from AP2
 * mandates: `payment_amount`, `payee`, `transaction_id` (for a checkout mandate its
 * `checkout_hash`, the value a payment mandate's `transaction_id` carries for that checkout),
 * `execution_date`, `payment_instrument.type`, `risk_data`, `cnf.jwk`, `constraints`, `iat`,
 * `exp`. Read from other kinds: `to`, `recipient` or `phone` (the first that is a string) as
 * the recipient, `channel`, and `amount` as an Amount object or as an integer beside a
 * top-level `currency`.
 */
export interface MandateFacts {
  amount: Money | null;
  payee: Payee | null;
  recipient: string | null;
  channel: string | null;
  transactionId: string | null;
  executionDate: string | null;
  instrumentType: string | null;
  /** The client's risk signals; the service's own namespace is never read back as a signal. */
  riskData: Record<string, unknown> | null;
  /** The key an open mandate is bound to (`cnf.jwk`). */
  holderKey: Jwk | null;
  limits: OpenMandateLimits | null;
  issuedAt: number | null;
  expiresAt: number | null;
}

const NO_FACTS: MandateFacts = {
  amount: null,
  payee: null,
  recipient: null,
  channel: null,
  transactionId: null,
  executionDate: null,
  instrumentType: null,
  riskData: null,
  holderKey: null,
  limits: null,
  issuedAt: null,
  expiresAt: null,
};

export function ap2Facts(valid: ValidMandate): MandateFacts {
  const times = { issuedAt: valid.mandate.iat ?? null, expiresAt: valid.mandate.exp ?? null };
  switch (valid.type) {
    case "payment":
      return {
        ...NO_FACTS,
        ...times,
        ...paymentTerms(valid.mandate),
        transactionId: valid.mandate.transaction_id,
      };
    case "open_payment":
      return {
        ...NO_FACTS,
        ...times,
        ...paymentTerms(valid.mandate),
        holderKey: valid.mandate.cnf.jwk ?? null,
        limits: openLimits(valid.mandate.constraints),
      };
    case "checkout":
      return { ...NO_FACTS, ...times, transactionId: valid.mandate.checkout_hash };
    case "open_checkout":
      return {
        ...NO_FACTS,
        ...times,
        holderKey: valid.mandate.cnf.jwk ?? null,
        limits: openLimits(valid.mandate.constraints),
      };
  }
}

function paymentTerms(mandate: PaymentMandate | OpenPaymentMandate) {
  const riskData = withoutServiceRiskData(mandate).risk_data;
  return {
    amount: mandate.payment_amount ? money(mandate.payment_amount) : null,
    payee: mandate.payee ? payee(mandate.payee) : null,
    executionDate: mandate.execution_date ?? null,
    instrumentType: mandate.payment_instrument?.type ?? null,
    riskData: isObject(riskData) ? riskData : null,
  };
}

function openLimits(constraints: (OpenPaymentConstraint | OpenCheckoutConstraint)[]) {
  const limits: OpenMandateLimits = { maxAmounts: [], allowedPayees: [], constraints };
  for (const constraint of constraints) {
    if (constraint.type === "payment.amount_range") {
      limits.maxAmounts.push({ amount: constraint.max, currency: constraint.currency });
    }
    if (
      constraint.type === "payment.allowed_payees" ||
      constraint.type === "checkout.allowed_merchants"
    ) {
      limits.allowedPayees.push(allowList(constraint.allowed));
    }
  }
  return limits;
}

function allowList(entries: (Merchant | UndisclosedElement)[]): AllowedPayees {
  const disclosed: Payee[] = [];
  for (const entry of entries) if (!isUndisclosedElement(entry)) disclosed.push(payee(entry));
  return { disclosed, undisclosed: entries.length - disclosed.length };
}

/** Facts of a non-AP2 action: only what is there, and only when it has the expected type. */
export function actionFacts(mandate: Record<string, unknown>): MandateFacts {
  const recipient = [mandate.to, mandate.recipient, mandate.phone].find(
    (value) => typeof value === "string",
  );
  return {
    ...NO_FACTS,
    recipient: recipient ?? null,
    channel: typeof mandate.channel === "string" ? mandate.channel : null,
    amount: actionAmount(mandate),
  };
}

function actionAmount(mandate: Record<string, unknown>): Money | null {
  const nested = amountSchema.safeParse(mandate.amount);
  if (nested.success) return money(nested.data);
  const flat = amountSchema.safeParse({ amount: mandate.amount, currency: mandate.currency });
  return flat.success ? money(flat.data) : null;
}

function money(amount: Amount): Money {
  return { amount: amount.amount, currency: amount.currency };
}

function payee(merchant: Merchant): Payee {
  return { id: merchant.id, name: merchant.name, website: merchant.website ?? null };
}

/**
 * Where the service writes its signed Risk Payload in the mandate it returns:
 * `risk_data["agent-risk"]`.
 */
export const RISK_DATA_NAMESPACE = "agent-risk";

/** The mandate as its author wrote it: the service's namespace in `risk_data` removed. */
export function withoutServiceRiskData(mandate: Record<string, unknown>): Record<string, unknown> {
  const riskData = mandate.risk_data;
  if (!isObject(riskData)) return mandate;
  // An empty `risk_data` counts as none, whether sent empty or emptied here: a mandate sent
  // with `{}` and the same mandate sent back with only our payload in it hash the same.
  const { [RISK_DATA_NAMESPACE]: _injected, ...clientSignals } = riskData;
  const { risk_data: _riskData, ...rest } = mandate;
  return Object.keys(clientSignals).length === 0 ? rest : { ...rest, risk_data: clientSignals };
}

/** The mandate to forward downstream: `risk_data` as submitted plus our namespaced payload. */
export function withRiskPayload(mandate: Record<string, unknown>, outcome: Outcome) {
  const riskData = mandate.risk_data;
  if (
    riskData !== undefined &&
    (typeof riskData !== "object" || riskData === null || Array.isArray(riskData))
  ) {
    return mandate;
  }
  return {
    ...mandate,
    risk_data: {
      ...(riskData as Record<string, unknown> | undefined),
      [RISK_DATA_NAMESPACE]: {
        assessment_id: outcome.id,
        jws: outcome.risk_payload.jws,
        kid: outcome.risk_payload.kid,
        alg: outcome.risk_payload.alg,
        verify_url: outcome.risk_payload.verify_url,
      },
    },
  };
}
