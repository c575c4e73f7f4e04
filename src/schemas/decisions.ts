/**
 * The assessment's vocabulary, written once: the wire's enums, the database's CHECKs, the rule
 * language and the reports all import these lists (issue 38, "One vocabulary").
 */

/** What an assessment answers, in increasing severity. */
export const DECISIONS = ["approve", "review", "deny"] as const;
export type Decision = (typeof DECISIONS)[number];

/** The Risk Payload's `risk_level`, one per decision band (docs/risk-model.md). */
export const RISK_LEVELS = ["normal", "elevated", "highest"] as const;
export type RiskLevel = (typeof RISK_LEVELS)[number];
