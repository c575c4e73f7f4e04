import type { NormalizedRules } from "../assess/policy";
import type { ParsedAssessRequest } from "../assess/request";
import { scoreAction } from "../assess/risk";
import type { Decision } from "../schemas/vocabulary";
import { caseInput, type EvalCase } from "./eval-cases";

/**
 * Scoring a policy against an evaluation set (docs/rules.md). Each case is decided by the
 * model under the policy, from its request and stated context. Binary metrics treat "flagged"
 * as the positive class: a `deny` (positive `deny`), or a `review` or `deny` (positive
 * `review_or_deny`, the default: neither completes without a person). A case is positive by
 * its fraud label when it has one, else by whether its expected decision is flagged.
 */

export type Positive = "deny" | "review_or_deny";

export interface Confusion {
  tp: number;
  fp: number;
  tn: number;
  fn: number;
  /** `decisions[expected][predicted]`, over the cases labeled with a decision. */
  decisions: Record<Decision, Record<Decision, number>>;
}

export interface Metrics {
  precision: number | null;
  recall: number | null;
  f1: number | null;
  accuracy: number;
  approval_rate: number;
  /** Share of decision-labeled cases decided as expected; null when none is. */
  decision_accuracy: number | null;
}

export interface Misclassified {
  index: number;
  id: string | null;
  expected: Decision | null;
  fraud: boolean | null;
  decision: Decision;
  risk_score: number;
  rule: string | null;
  reason: string;
}

export interface EvalScore {
  metrics: Metrics;
  confusion: Confusion;
  misclassified: Misclassified[];
}

function flagged(decision: Decision, positive: Positive): boolean {
  return positive === "deny" ? decision === "deny" : decision !== "approve";
}

/** A ratio to four decimals; null when the denominator is 0 (undefined, not 0). */
function ratio(numerator: number, denominator: number): number | null {
  return denominator === 0 ? null : Math.round((numerator / denominator) * 10_000) / 10_000;
}

export function scoreCases(
  cases: EvalCase[],
  requests: ParsedAssessRequest[],
  rules: NormalizedRules,
  positive: Positive,
  now: number,
): EvalScore {
  const row = () => ({ approve: 0, review: 0, deny: 0 });
  const confusion: Confusion = {
    tp: 0,
    fp: 0,
    tn: 0,
    fn: 0,
    decisions: { approve: row(), review: row(), deny: row() },
  };
  const misclassified: Misclassified[] = [];
  let approved = 0;
  let labeled = 0;
  let asExpected = 0;
  cases.forEach((item, index) => {
    const request = requests[index] as ParsedAssessRequest;
    const result = scoreAction(caseInput(item, request, rules, now));
    const decision = result.decision;
    if (decision === "approve") approved++;
    const actual = item.fraud ?? flagged(item.expected as Decision, positive);
    const predicted = flagged(decision, positive);
    if (actual && predicted) confusion.tp++;
    else if (!actual && predicted) confusion.fp++;
    else if (!actual && !predicted) confusion.tn++;
    else confusion.fn++;
    let wrong = actual !== predicted;
    if (item.expected !== undefined) {
      labeled++;
      confusion.decisions[item.expected][decision]++;
      if (item.expected === decision) asExpected++;
      else wrong = true;
    }
    if (wrong) {
      misclassified.push({
        index,
        id: item.id ?? null,
        expected: item.expected ?? null,
        fraud: item.fraud ?? null,
        decision,
        risk_score: result.risk_score,
        rule: result.rule?.id ?? null,
        reason: result.reason,
      });
    }
  });
  const { tp, fp, tn, fn } = confusion;
  const precision = ratio(tp, tp + fp);
  const recall = ratio(tp, tp + fn);
  // 2TP / (2TP + FP + FN): defined whenever a case is flagged or positive, 0 when none is
  // caught, even if precision (nothing flagged) or recall (nothing positive) is not.
  const f1 = ratio(2 * tp, 2 * tp + fp + fn);
  return {
    metrics: {
      precision,
      recall,
      f1,
      accuracy: ratio(tp + tn, cases.length) ?? 0,
      approval_rate: ratio(approved, cases.length) ?? 0,
      decision_accuracy: ratio(asExpected, labeled),
    },
    confusion,
    misclassified,
  };
}
