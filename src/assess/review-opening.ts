import type { ChainVerdict } from "../ap2-credentials/verify";
import { newId } from "../lib/ids";
import type { ReviewOpening, ReviewRecheck, ReviewSpend } from "../schemas/reviews";

/**
 * The review item a `review` verdict opens. With a verified credential it keeps what approving
 * would spend, so a person's approval is judged like an automated one, and what approving
 * checks again (`recheckTerms`) (docs/reviews.md).
 */
export function reviewOpening(
  verdict: ChainVerdict | null,
  receivedAt: number,
  recheck: ReviewRecheck | null,
): ReviewOpening {
  const spend = verdict?.verified ? verdict.spend : null;
  return { id: newId(receivedAt), spend: spend ? spendTerms(spend) : null, recheck };
}

/** What approving a verified payment spends, as the ledger object judges it. */
export function spendTerms(spend: NonNullable<ChainVerdict["spend"]>): ReviewSpend {
  return {
    root: spend.consent,
    rootSpellings: spend.rootSpellings,
    transaction: spend.transactionId,
    amount: spend.amount,
    currency: spend.currency,
    budgets: spend.budgets.map((b) => ({ max: b.maxMinor, currency: b.currency })),
    maxOccurrences: spend.maxOccurrences,
    caps: spend.caps.map((c) => ({ max: c.maxMinor, currency: c.currency, period: c.period })),
    at: spend.at,
  };
}
