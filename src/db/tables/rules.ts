/** Evaluation sets (labeled cases) and evaluations (a policy scored against a set). */
import { sql } from "drizzle-orm";
import { check, index, integer, jsonb, pgTable, text, uuid } from "drizzle-orm/pg-core";
import { EVAL_POSITIVES } from "../../schemas/vocabulary";
import { createdAt } from "./columns";
import { tenantOrg } from "./foundation";

/** A labeled collection of cases; the cases are kept whole, in the order given. */
export const evalSets = pgTable(
  "eval_sets",
  {
    id: uuid("id").primaryKey(),
    orgId: tenantOrg(),
    name: text("name").notNull(),
    description: text("description"),
    cases: jsonb("cases").notNull(),
    caseCount: integer("case_count").notNull(),
    createdAt: createdAt(),
  },
  (t) => [index("eval_sets_org_idx").on(t.orgId, t.id)],
);

/**
 * One run of a policy over a set: the result is immutable. The policy's rules and the set's
 * name are copied in, so an evaluation stays readable after the set is deleted.
 */
export const evals = pgTable(
  "evals",
  {
    id: uuid("id").primaryKey(),
    orgId: tenantOrg(),
    evalSetId: uuid("eval_set_id").notNull(),
    evalSetName: text("eval_set_name").notNull(),
    policyId: uuid("policy_id").notNull(),
    policyRules: jsonb("policy_rules").notNull(),
    positive: text("positive", { enum: EVAL_POSITIVES }).notNull(),
    caseCount: integer("case_count").notNull(),
    metrics: jsonb("metrics").notNull(),
    confusion: jsonb("confusion").notNull(),
    misclassified: jsonb("misclassified").notNull(),
    createdAt: createdAt(),
  },
  (t) => [
    index("evals_org_idx").on(t.orgId, t.id),
    index("evals_set_idx").on(t.orgId, t.evalSetId),
    check("evals_positive_check", sql`${t.positive} in ('deny', 'review_or_deny')`),
  ],
);
