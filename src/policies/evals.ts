import type { z } from "@hono/zod-openapi";
import { and, desc, eq, lt } from "drizzle-orm";
import type { PolicyRules } from "../assess/policy";
import { parsedPolicy } from "../assess/policy-cache";
import type { Tenant } from "../auth/tenant";
import { decodeIdCursor, getById, type Page, page } from "../db/pagination";
import { evalSets, evals, policies } from "../db/schema";
import { ApiError } from "../errors";
import { commit } from "../ledger/commit";
import { newId } from "../lib/ids";
import { checkCaseAggregates, type EvalCase, parseCases } from "./eval-cases";
import type { Eval, EvalSummary, ListEvalsQuery, RunEval } from "./eval-schemas";
import { scoreCases } from "./eval-score";

type Row = Omit<typeof evals.$inferSelect, "orgId">;

/** The columns of a summary: a list never reads the rules or the misclassified cases. */
const summaryColumns = {
  id: evals.id,
  evalSetId: evals.evalSetId,
  evalSetName: evals.evalSetName,
  policyId: evals.policyId,
  positive: evals.positive,
  caseCount: evals.caseCount,
  metrics: evals.metrics,
  confusion: evals.confusion,
  createdAt: evals.createdAt,
};
type SummaryRow = Pick<Row, keyof typeof summaryColumns>;

function toSummary(row: SummaryRow): z.infer<typeof EvalSummary> {
  return {
    object: "eval",
    id: row.id,
    eval_set_id: row.evalSetId,
    eval_set_name: row.evalSetName,
    policy_id: row.policyId,
    positive: row.positive,
    case_count: row.caseCount,
    metrics: row.metrics as z.infer<typeof EvalSummary>["metrics"],
    confusion: row.confusion as z.infer<typeof EvalSummary>["confusion"],
    created: row.createdAt.toISOString(),
  };
}

function toEval(row: Row): z.infer<typeof Eval> {
  return {
    ...toSummary(row),
    policy_rules: row.policyRules as z.infer<typeof PolicyRules>,
    misclassified: row.misclassified as z.infer<typeof Eval>["misclassified"],
  };
}

/**
 * Scores a policy against a set of labeled cases and stores the evaluation, recording
 * `eval.completed` with it in one transaction.
 */
export async function runEval(
  tenant: Tenant,
  body: z.infer<typeof RunEval>,
): Promise<z.infer<typeof Eval>> {
  const setId = body.eval_set_id.toLowerCase();
  const policyId = body.policy_id.toLowerCase();
  const [sets, found] = await tenant.batch((db) => [
    db.select().from(evalSets).where(eq(evalSets.id, setId)),
    db.select().from(policies).where(eq(policies.id, policyId)),
  ]);
  const set = sets[0];
  const policy = found[0];
  if (!set) throw new ApiError("not_found", [{ path: "eval_set_id", message: "no such set" }]);
  if (!policy) throw new ApiError("not_found", [{ path: "policy_id", message: "no such policy" }]);
  // Parsed once per (id, version) in the isolate, as on the assess path; stored rules were
  // validated at creation, so a later grammar that refuses them is our fault.
  const rules = parsedPolicy(policy);
  if (rules === "unreadable") throw new ApiError("internal_error");
  const cases = set.cases as EvalCase[];
  const requests = parseCases(cases);
  checkCaseAggregates(cases, requests, rules);
  // A case without `at` (a set stored before it was resolved at creation) is read at the
  // set's creation time: every run of a set reads the same time.
  const score = scoreCases(cases, requests, rules, body.positive, set.createdAt.getTime());
  const now = new Date();
  const id = newId(now.getTime());
  const values = {
    id,
    evalSetId: set.id,
    evalSetName: set.name,
    policyId: policy.id,
    policyRules: policy.rules,
    positive: body.positive,
    caseCount: cases.length,
    ...score,
    createdAt: now,
  };
  const { results } = await commit(
    tenant,
    { type: "eval.completed", subject: { type: "eval", id }, payload: toEval(values) },
    (db) => [db.insert(evals).values(values).returning()],
  );
  const row = results[0][0];
  if (!row) throw new ApiError("internal_error");
  return toEval(row);
}

/** A page of the org's evaluations, newest first, by set and policy if asked. */
export async function listEvals(
  tenant: Tenant,
  query: z.infer<typeof ListEvalsQuery>,
): Promise<Page<z.infer<typeof EvalSummary>>> {
  const { limit, cursor, eval_set_id, policy_id } = query;
  const after = decodeIdCursor(cursor);
  const [rows] = await tenant.batch((db) => [
    db
      .select(summaryColumns)
      .from(evals)
      .where(
        and(
          after ? lt(evals.id, after) : undefined,
          eval_set_id ? eq(evals.evalSetId, eval_set_id) : undefined,
          policy_id ? eq(evals.policyId, policy_id) : undefined,
        ),
      )
      .orderBy(desc(evals.id))
      .limit(limit + 1),
  ]);
  return page(rows.map(toSummary), limit, (e) => e.id);
}

/** One evaluation (404 otherwise). */
export async function getEval(tenant: Tenant, id: string): Promise<z.infer<typeof Eval>> {
  return toEval(await getById(tenant, evals, id));
}
