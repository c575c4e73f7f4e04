import type { OpenMandateLimits } from "./facts";
import type { Findings, RiskInput } from "./risk-model";
import { rejection, signal } from "./signals";

/** An execution date further ahead than this is unusual enough to flag. */
export const FAR_FUTURE_MS = 365 * 86_400_000;
/** Clock skew tolerated on `iat`; none on `exp` (RFC 7519: not accepted on or after it). */
export const IAT_LEEWAY_MS = 60_000;

/**
 * The mandate's own bounds, whatever the org's policy says: its validity period, and the
 * constraints an AP2 open mandate sets (amount range, allowed payees, execution window). Each
 * constraint must hold; one that cannot be checked is a medium signal.
 *
 * Not evaluated, because they need data this stage does not have: `payment.budget` and
 * `payment.agent_recurrence` (spend history), `allowed_payment_instruments` and `allowed_pisps`
 * (the facts carry no instrument id or PISP), `payment.reference`, `checkout.line_items`.
 */
export function checkMandateBounds(input: RiskInput, found: Findings): void {
  const { facts, now } = input;
  if (facts.expiresAt !== null && now >= facts.expiresAt * 1000) {
    found.rejection_reasons.push(
      rejection(
        "mandate_expired",
        `the mandate expired at ${isoSeconds(facts.expiresAt)} (exp ${facts.expiresAt})`,
      ),
    );
  }
  if (facts.issuedAt !== null && facts.issuedAt * 1000 > now + IAT_LEEWAY_MS) {
    found.signals.push(signal("mandate_issued_in_future", "medium"));
  }
  const execution = facts.executionDate === null ? now : instant(facts.executionDate, "start");
  if (execution === null) found.signals.push(signal("execution_date_unreadable", "medium"));
  else if (execution - now > FAR_FUTURE_MS) {
    found.signals.push(signal("execution_date_far_future", "medium"));
  }
  if (facts.limits === null) return;
  checkAmountRange(input, facts.limits, found);
  checkPayee(input, facts.limits, found);
  if (execution !== null) checkExecutionWindow(execution, facts.limits, found);
}

function checkAmountRange(input: RiskInput, limits: OpenMandateLimits, found: Findings): void {
  const money = input.facts.amount;
  if (money === null) return;
  const ranges = limits.constraints.flatMap((c) => (c.type === "payment.amount_range" ? [c] : []));
  if (ranges.length === 0) return;
  const same = ranges.filter((range) => range.currency === money.currency);
  if (same.length === 0) {
    const currencies = [...new Set(ranges.map((range) => range.currency))].join(", ");
    found.rejection_reasons.push(
      rejection(
        "mandate_currency_mismatch",
        `currency ${money.currency} is outside the mandate's amount range, set in ${currencies}`,
      ),
    );
  }
  for (const range of same) {
    if (money.amount > range.max) {
      found.rejection_reasons.push(
        rejection(
          "mandate_amount_exceeded",
          `amount ${money.amount} ${money.currency} ` +
            `exceeds the mandate's maximum ${range.max} ${range.currency}`,
        ),
      );
    }
    if (range.min !== undefined && money.amount < range.min) {
      found.rejection_reasons.push(
        rejection(
          "mandate_amount_below_minimum",
          `amount ${money.amount} ${money.currency} ` +
            `is below the mandate's minimum ${range.min} ${range.currency}`,
        ),
      );
    }
  }
}

/** Payees match by merchant `id`. An undisclosed entry could be anyone: not provably outside. */
function checkPayee(input: RiskInput, limits: OpenMandateLimits, found: Findings): void {
  const payee = input.facts.payee;
  if (payee === null) return;
  for (const allowed of limits.allowedPayees) {
    if (allowed.disclosed.some((entry) => entry.id === payee.id)) continue;
    if (allowed.undisclosed > 0) {
      found.signals.push(signal("payee_unverifiable", "medium"));
    } else {
      found.rejection_reasons.push(
        rejection(
          "payee_not_allowed",
          `payee ${quoted(payee.id)} ` +
            `is not among the mandate's ${allowed.disclosed.length} allowed payees`,
        ),
      );
    }
  }
}

function checkExecutionWindow(execution: number, limits: OpenMandateLimits, found: Findings) {
  for (const constraint of limits.constraints) {
    if (constraint.type !== "payment.execution_date") continue;
    const { not_before: notBefore, not_after: notAfter } = constraint;
    const from = notBefore === undefined ? -Infinity : instant(notBefore, "start");
    const to = notAfter === undefined ? Infinity : instant(notAfter, "end");
    if (from === null || to === null) {
      found.signals.push(signal("execution_date_unreadable", "medium"));
    } else if (execution < from || execution > to) {
      const bound = execution < from ? `not_before ${notBefore}` : `not_after ${notAfter}`;
      found.rejection_reasons.push(
        rejection(
          "mandate_outside_execution_window",
          `execution at ${new Date(execution).toISOString()} is outside the mandate's ${bound}`,
        ),
      );
    }
  }
}

const ISO_DATE = /^\d{4}-\d{2}-\d{2}$/;
const ISO_DATE_TIME =
  /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:\d{2})?$/;

/**
 * Epoch ms of an ISO 8601 date or date-time (UTC when no offset is given), null otherwise.
 * Other formats are refused, since `Date.parse` reads them differently between engines. A bare
 * date as an upper bound (`not_after: "2026-05-01"`) means the whole of that day.
 */
function instant(text: string, edge: "start" | "end"): number | null {
  const isDate = ISO_DATE.test(text);
  if (!isDate && !ISO_DATE_TIME.test(text)) return null;
  const hasOffset = isDate || /(?:Z|[+-]\d{2}:\d{2})$/.test(text);
  const ms = Date.parse(hasOffset ? text : `${text}Z`);
  if (Number.isNaN(ms)) return null;
  return isDate && edge === "end" ? ms + 86_400_000 - 1 : ms;
}

function isoSeconds(seconds: number): string {
  const date = new Date(seconds * 1000);
  return Number.isNaN(date.getTime()) ? `${seconds}` : date.toISOString();
}

/** A foreign identifier in a sentence: bounded, so a description cannot be made huge. */
function quoted(text: string): string {
  return JSON.stringify(text.length > 64 ? `${text.slice(0, 64)}…` : text);
}
