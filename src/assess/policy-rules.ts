import type { Money } from "./facts";
import { checkMandateBounds } from "./mandate-bounds";
import type { NormalizedRules } from "./policy";
import { AMOUNT_KINDS } from "./risk-input";
import {
  type ComponentResult,
  type Confidences,
  confidenceOf,
  type Findings,
  MANDATE_ASSURANCE,
  type RiskInput,
} from "./risk-model";
import { type RejectionKey, type RejectionReason, rejection, signal } from "./signals";

// --- Evaluation ---

export interface PolicyResult extends ComponentResult {
  /** `policy_adherence`, for callers that want the one number. */
  confidence: number;
  confidences: Pick<Confidences, "policy_adherence" | "mandate_validity">;
}

/**
 * The "policy" stage: the org's rules and the mandate's own bounds. A violation is a rejection
 * reason (which denies); a rule that cannot be checked is a medium signal, never a silent pass.
 */
export function evaluatePolicy(input: RiskInput): PolicyResult {
  const found: Findings = { signals: [], rejection_reasons: [] };
  checkMandateBounds(input, found);
  const rules = input.rules;
  if (rules !== null) {
    checkAmounts(input, rules, found);
    checkVelocity(input, rules, found);
    checkGeo(input, rules, found);
  }
  checkCredential(input, found);
  found.rejection_reasons = firstPerKey(found.rejection_reasons);
  const policyAdherence = confidenceOf(1, "policy", found);
  return {
    ...found,
    confidence: policyAdherence,
    confidences: {
      policy_adherence: policyAdherence,
      mandate_validity: confidenceOf(mandateAssurance(input), "mandate", found),
    },
  };
}

/**
 * What proves the mandate: a verified AP2 credential (its failure otherwise denies, as
 * `credential_<failure>`), or nothing for an AP2 mandate sent as decoded JSON (a low signal).
 */
function checkCredential(input: RiskInput, found: Findings): void {
  const credential = input.credential ?? null;
  if (credential === null) {
    if (input.kind === "ap2_payment") found.signals.push(signal("unverified", "low"));
    return;
  }
  if (credential.verified) {
    const status = credential.status;
    if (status?.state === "suspended") found.signals.push(signal("credential_suspended", "high"));
    if (status?.state === "unknown") {
      found.signals.push(signal("credential_status_unknown", status.required ? "high" : "low"));
    }
    return;
  }
  const failure = credential.failure ?? "delegation_broken";
  const constraint = credential.detail?.constraint;
  const message = credential.detail?.message ?? failure;
  found.rejection_reasons.push(
    rejection(
      `credential_${failure}` as RejectionKey,
      constraint === undefined
        ? `the credential is refused (${failure}): ${message}`
        : `the credential is refused (${failure}, ${constraint}): ${message}`,
    ),
  );
}

/** The base of `mandate_validity`: 1 for a verified credential and for non-AP2 kinds. */
function mandateAssurance(input: RiskInput): number {
  if (input.kind !== "ap2_payment" || input.credential) return 1;
  return MANDATE_ASSURANCE.decoded;
}

/**
 * The amount checked is the action's; an open mandate without one is checked by each of its
 * ceilings (`payment.amount_range` max), since that is what it authorizes.
 */
function checkAmounts(input: RiskInput, rules: NormalizedRules, found: Findings): void {
  if (!AMOUNT_KINDS.includes(input.kind)) return;
  if (rules.max_amount === undefined && rules.currencies === undefined) return;
  const stated = input.facts.amount;
  const amounts: Money[] = stated ? [stated] : (input.facts.limits?.maxAmounts ?? []);
  if (amounts.length === 0) {
    found.signals.push(signal("amount_unknown", "medium"));
    return;
  }
  for (const money of amounts) {
    const what = stated ? "amount" : "the mandate's maximum";
    if (rules.max_amount !== undefined && money.amount > rules.max_amount) {
      found.rejection_reasons.push(
        rejection(
          "max_amount_exceeded",
          `${what} ${money.amount} ${money.currency} ` +
            `exceeds the policy maximum ${rules.max_amount}`,
        ),
      );
    }
    if (rules.currencies !== undefined && !rules.currencies.includes(money.currency)) {
      found.rejection_reasons.push(
        rejection(
          "currency_not_allowed",
          `currency ${money.currency} ` +
            `is not among the policy's currencies ${list(rules.currencies)}`,
        ),
      );
    }
  }
}

function checkVelocity(input: RiskInput, rules: NormalizedRules, found: Findings): void {
  if (rules.velocity === undefined) return;
  const { window, max } = rules.velocity;
  const count = input.history.windowCount;
  if (count === null) {
    found.signals.push(signal("velocity_unknown", "medium"));
  } else if (count >= max) {
    found.rejection_reasons.push(
      rejection(
        "velocity_exceeded",
        `this is assessment ${count + 1} of the agent within ${window}; ` +
          `the policy allows ${max} per ${window}`,
      ),
    );
  }
}

function checkGeo(input: RiskInput, rules: NormalizedRules, found: Findings): void {
  if (rules.geo === undefined) return;
  const country = input.geo?.toUpperCase() ?? null;
  // "XX" is Cloudflare's "country unknown"; anything not shaped like a code is unknown too.
  if (country === null || country === "XX" || !/^[A-Z0-9]{2}$/.test(country)) {
    found.signals.push(signal("geo_unknown", "medium"));
  } else if (!rules.geo.allow.includes(country)) {
    found.rejection_reasons.push(
      rejection(
        "geo_not_allowed",
        `country ${country} is not among the policy's allowed countries ${list(rules.geo.allow)}`,
      ),
    );
  }
}

/** One reason per key: several ceilings may break the same rule, one sentence says it. */
function firstPerKey(reasons: RejectionReason[]): RejectionReason[] {
  return reasons.filter(
    (reason, index) => reasons.findIndex((other) => other.key === reason.key) === index,
  );
}

/** A list for a sentence, cut after ten entries so that a description stays readable. */
function list(codes: readonly string[]): string {
  const shown = codes.slice(0, 10).join(", ");
  return codes.length > 10 ? `${shown} and ${codes.length - 10} more` : shown;
}
