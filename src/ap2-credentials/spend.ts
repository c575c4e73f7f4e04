/**
 * What an approved payment spends, and the rules across payments that only the org's Durable
 * Object can decide, because only it knows what was approved before under the same consent.
 *
 * "One consent pays once": a root pays a `transaction_id` once. The root is keyed by `consent`,
 * the digest of what its issuer signed (`header.payload`), never by the text of its JWS: an
 * ES256 signature has two spellings that verify, and an issuer may sign the same content twice
 * (ECDSA is randomized). A new presentation of the same transaction has a new nonce, so a new
 * leaf and a new receipt reference: keying on those would miss it too.
 * "A budget spans the closed mandates": every open hop's `payment.budget` caps the sum of the
 * amounts approved under that root, any payee; `agent_recurrence.max_occurrences` caps their
 * number. The verifier checks a single payment against each of these; `judgeSpend` is the
 * cumulative rule, for the Durable Object to apply in its critical section.
 */
import { type Claims, finiteNumber, isClaims, own, safeInteger, text } from "./claims";
import type { ClosedPayment } from "./mandates";
import { type CapPeriod, type PeriodCap, periodWindow, readCap } from "./period-caps";

export interface Spend {
  /** base64url(SHA-256(the root's `header.payload`)). */
  consent: string;
  /**
   * base64url(SHA-256) of each text of the root JWS that verifies (the presented one, and its
   * ES256 twin): how spends recorded before keys named content were keyed.
   */
  rootSpellings: string[];
  transactionId: string;
  /** Minor units of `currency`. */
  amount: number;
  currency: string;
  /** Every open hop's `payment.budget`, its `max` read in major units, so ×100. */
  budgets: { maxMinor: number; currency: string }[];
  /** The smallest `payment.agent_recurrence.max_occurrences` of the open hops, if any. */
  maxOccurrences: number | null;
  /** Every open hop's `payment.cumulative`: a cap on the sum within a UTC calendar period. */
  caps: PeriodCap[];
  /** Epoch ms the payment counts at in its periods: the verification's time (a test clock's). */
  at: number;
}

/**
 * `payment.budget.max` in minor units. The SDK reads `max` in major units (`int(max * 100)`);
 * so does this, but to the exact cent: `int(19.99 * 100)` is 1998 in binary floating point,
 * here it is 1999. Undefined for a negative, non-finite or unsafe value.
 */
export function budgetMaxMinor(max: unknown): number | undefined {
  const major = finiteNumber(max);
  if (major === undefined || major < 0) return undefined;
  const minor = Math.floor(major * 100 + 1e-6);
  return Number.isSafeInteger(minor) ? minor : undefined;
}

function constraintsOf(open: Claims, type: string): Claims[] {
  const list = own(open, "constraints");
  return Array.isArray(list) ? list.filter((c) => isClaims(c) && own(c, "type") === type) : [];
}

/** The spend of a closed payment whose chain verified (so every constraint read is well formed). */
export function spendOf(
  root: Pick<Spend, "consent" | "rootSpellings">,
  opens: Claims[],
  closed: ClosedPayment,
  at: number,
): Spend {
  const budgets = opens.flatMap((open) =>
    constraintsOf(open, "payment.budget").map((budget) => ({
      maxMinor: budgetMaxMinor(own(budget, "max")) ?? 0,
      currency: text(own(budget, "currency")) ?? "",
    })),
  );
  const occurrences = opens
    .flatMap((open) => constraintsOf(open, "payment.agent_recurrence"))
    .map((recurrence) => safeInteger(own(recurrence, "max_occurrences")))
    .filter((n): n is number => n !== undefined);
  return {
    ...root,
    transactionId: closed.transactionId,
    amount: closed.amount,
    currency: closed.currency,
    budgets,
    maxOccurrences: occurrences.length > 0 ? Math.min(...occurrences) : null,
    caps: opens
      .flatMap((open) => constraintsOf(open, "payment.cumulative").map(readCap))
      .filter((cap): cap is PeriodCap => typeof cap !== "string"),
    at,
  };
}

/** What the Durable Object has recorded as approved under one consent, in one mode. */
export interface RecordedSpend {
  transactionIds: ReadonlySet<string>;
  /** Sum of the approved amounts, minor units. */
  total: number;
  count: number;
  /** Sum of the approved amounts in the period of the spend's `at`, per period (0 if absent). */
  inPeriod?: Partial<Record<CapPeriod, number>>;
}

export type SpendRefusal = "already_consumed" | "budget_exceeded";

/**
 * Whether a payment may be approved after what `recorded` holds: `already_consumed` for a
 * transaction already paid under this root, `budget_exceeded` when the amount would take the
 * total past a budget, the period's total past a period cap, or the count past
 * `maxOccurrences`; null when it fits. Refused payments
 * are never recorded, so they spend nothing.
 */
export function judgeSpend(
  spend: Spend,
  recorded: RecordedSpend,
): { refusal: SpendRefusal; message: string } | null {
  if (recorded.transactionIds.has(spend.transactionId)) {
    return {
      refusal: "already_consumed",
      message: `transaction ${spend.transactionId} was already paid under this consent`,
    };
  }
  const over = spend.budgets.find((b) => recorded.total + spend.amount > b.maxMinor);
  if (over) {
    return {
      refusal: "budget_exceeded",
      message: `${recorded.total} + ${spend.amount} exceeds the budget of ${over.maxMinor} ${over.currency}`,
    };
  }
  const capped = spend.caps.find(
    (cap) => (recorded.inPeriod?.[cap.period] ?? 0) + spend.amount > cap.maxMinor,
  );
  if (capped) {
    const [start] = periodWindow(capped.period, spend.at);
    const from = new Date(start).toISOString();
    return {
      refusal: "budget_exceeded",
      message: `the ${capped.period} cap of ${capped.maxMinor} ${capped.currency} from ${from} would be passed`,
    };
  }
  if (spend.maxOccurrences !== null && recorded.count >= spend.maxOccurrences) {
    return {
      refusal: "budget_exceeded",
      message: `the mandate allows ${spend.maxOccurrences} payments; ${recorded.count} were made`,
    };
  }
  return null;
}
