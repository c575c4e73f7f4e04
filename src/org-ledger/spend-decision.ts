import { periodWindow } from "../ap2-credentials/period-caps";
import type { SpendRefusal } from "../ap2-credentials/spend";
import type { AssessmentCommit, Verdict } from "../assess/commit";
import type { ConsentTerms, LedgerStore } from "../ledger/ledger-store";
import type { ReviewSpend } from "../schemas/reviews";

/**
 * The verdicts a commit may end with, in the order `spendChoice` numbers them: the model's,
 * and for a credential-backed approval the two the ledger answers instead when it refuses the
 * spend. The one `spendChoice` picks is signed before the critical section, which must not
 * await; another only when a racing commit changed the choice (assessment-commit.ts).
 */
export function candidateVerdicts(commit: AssessmentCommit): Verdict[] {
  return commit.spend
    ? [commit.verdict, commit.spend.instead.already_consumed, commit.spend.instead.budget_exceeded]
    : [commit.verdict];
}

/**
 * Which verdict to answer: the model's (0), or for a credential-backed approval the ledger
 * refuses, `already_consumed` (1: this consent paid this transaction before, in this mode) or
 * `budget_exceeded` (2: the approved total would pass an open mandate's budget, or its
 * recurrence allows no more uses). Synchronous: part of the critical section.
 */
export function spendChoice(store: LedgerStore, commit: AssessmentCommit): 0 | 1 | 2 {
  const spend = commit.spend;
  if (!spend || commit.verdict.fields.decision !== "approve") return 0;
  const refusal = spendRefusal(store, commit.record.livemode, spend);
  return refusal === null ? 0 : refusal === "already_consumed" ? 1 : 2;
}

/**
 * Why this org may not approve the spend now in this mode, or null when it may: test approvals
 * never spend a live consent, nor live ones a test consent. A period cap (`payment.cumulative`)
 * passed is `budget_exceeded` too: a budget per UTC calendar period, the period holding the
 * spend's `at` (`now`, the approval's time, for an item opened before caps). Synchronous.
 */
export function spendRefusal(
  store: LedgerStore,
  livemode: boolean,
  spend: ReviewSpend,
  now: number = Date.now(),
): SpendRefusal | null {
  const spent = store.spent(livemode, spend, spend.transaction, spend.currency);
  if (spent.consumedBy !== null) return "already_consumed";
  const overBudget = spend.budgets.some(
    (budget) => budget.currency === spend.currency && spent.total + spend.amount > budget.max,
  );
  const exhausted = spend.maxOccurrences !== null && spent.uses >= spend.maxOccurrences;
  const overCap = (spend.caps ?? []).some((cap) => {
    if (cap.currency !== spend.currency) return false;
    const [from, to] = periodWindow(cap.period, spend.at ?? now);
    return store.spentWithin(livemode, spend, spend.currency, from, to) + spend.amount > cap.max;
  });
  return overBudget || exhausted || overCap ? "budget_exceeded" : null;
}

/** The terms a spend is judged under, kept with the consent for its attestation. */
export function termsOf(spend: ReviewSpend): ConsentTerms {
  return {
    currency: spend.currency,
    budgets: spend.budgets,
    caps: spend.caps ?? [],
    maxOccurrences: spend.maxOccurrences,
  };
}

/** What remains of a consent's budget, as the ledger object knows it (see `mandateBudgetOf`). */
export interface MandateBudgetState {
  terms: ConsentTerms;
  /** Approved under the consent in this mode, in the terms' currency, minor units. */
  spent: number;
  uses: number;
  periods: { period: string; start: number; end: number; max: number; spent: number }[];
}

/**
 * The ledger object's state of one consent in one mode at `at`: its kept terms, what was
 * approved in total and within each capped period holding `at`; null when nothing was approved.
 * Read with the same statements the spend decision uses, so it says what the next decision sees.
 */
export function mandateBudgetOf(
  store: LedgerStore,
  livemode: boolean,
  consent: string,
  at: number,
): MandateBudgetState | null {
  const terms = store.consentTerms(livemode, consent);
  if (!terms) return null;
  const key = { root: consent };
  const spent = store.spent(livemode, key, "", terms.currency);
  return {
    terms,
    spent: spent.total,
    uses: spent.uses,
    periods: terms.caps
      .filter((cap) => cap.currency === terms.currency)
      .map((cap) => {
        const [start, end] = periodWindow(cap.period, at);
        const within = store.spentWithin(livemode, key, terms.currency, start, end);
        return { period: cap.period, start, end, max: cap.max, spent: within };
      }),
  };
}
