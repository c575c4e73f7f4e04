import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { and, desc, eq, lt } from "drizzle-orm";
import { PolicyRules } from "../assess/policy";
import { parsedPolicy } from "../assess/policy-cache";
import { EVAL_POSITIVES, evalSets, evals, policies } from "../db/schema";
import { ApiError } from "../errors";
import type { AppEnv } from "../http/context";
import { decodeIdCursor, getById, page } from "../http/pagination";
import { guarded } from "../http/route";
import { errorResponses, IdParam, json, jsonBody, rowId } from "../http/schemas";
import { record } from "../ledger/ledger";
import { newId } from "../lib/ids";
import { checkCaseAggregates, type EvalCase, parseCases } from "../rules/eval-cases";
import { scoreCases } from "../rules/eval-score";
import { RowUuid } from "../schemas/agents";
import { listOf, PageQuery } from "../schemas/common";
import { DECISIONS } from "../schemas/vocabulary";

const RunEval = z
  .strictObject({
    eval_set_id: z.uuid(),
    policy_id: z.uuid(),
    positive: z.enum(EVAL_POSITIVES).default("review_or_deny").openapi({
      description: "The decisions that count as flagging an action (the positive class)",
    }),
  })
  .openapi("RunEvalRequest");

const Counts = z.object({ approve: z.int(), review: z.int(), deny: z.int() });
const ratio = z.number().min(0).max(1);

const summaryFields = {
  object: z.literal("eval"),
  id: z.string(),
  eval_set_id: z.string(),
  eval_set_name: z.string(),
  policy_id: z.string(),
  positive: z.enum(EVAL_POSITIVES),
  case_count: z.int(),
  metrics: z.object({
    precision: ratio.nullable(),
    recall: ratio.nullable(),
    f1: ratio.nullable(),
    accuracy: ratio,
    approval_rate: ratio,
    decision_accuracy: ratio.nullable(),
  }),
  confusion: z.object({
    tp: z.int(),
    fp: z.int(),
    tn: z.int(),
    fn: z.int(),
    decisions: z
      .object({ approve: Counts, review: Counts, deny: Counts })
      .openapi({ description: "`decisions[expected][decided]`, cases labeled with a decision" }),
  }),
  created: z.string(),
};

const EvalSummary = z.object(summaryFields).openapi("EvalSummary", {
  description:
    "An evaluation without its policy's rules and its misclassified cases " +
    "(`GET /v1/evals/{id}` has them)",
});

const Eval = z
  .object({
    ...summaryFields,
    policy_rules: PolicyRules.openapi({ description: "The policy's rules as scored" }),
    misclassified: z.array(
      z.object({
        index: z.int(),
        id: z.string().nullable(),
        expected: z.enum(DECISIONS).nullable(),
        fraud: z.boolean().nullable(),
        decision: z.enum(DECISIONS),
        risk_score: z.int(),
        rule: z.string().nullable(),
        reason: z.string(),
      }),
    ),
  })
  .openapi("Eval");

// A filter that is no uuid is the caller's mistake (400, after authentication), not an empty page.
const ListEvalsQuery = PageQuery.extend({
  eval_set_id: RowUuid.optional(),
  policy_id: RowUuid.optional(),
});

const tags = ["Evaluations"];

const run = createRoute(
  guarded(
    "policy:write",
    {
      method: "post",
      path: "/v1/evals/run",
      tags,
      summary: "Score a policy (draft or active) against an evaluation set and store the result",
      request: { body: jsonBody(RunEval) },
      responses: { 201: json(Eval, "The evaluation"), ...errorResponses(400, 401, 403, 404, 503) },
    },
    { liveOnly: true, rateLimit: "expensive" },
  ),
);

const list = createRoute(
  guarded("policy:read", {
    method: "get",
    path: "/v1/evals",
    tags,
    summary: "List evaluations, newest first (without their rules and misclassified cases)",
    request: { query: ListEvalsQuery },
    responses: {
      200: json(listOf(EvalSummary, "EvalList"), "A page of evaluations"),
      ...errorResponses(400, 401, 403, 503),
    },
  }),
);

const get = createRoute(
  guarded("policy:read", {
    method: "get",
    path: "/v1/evals/{id}",
    tags,
    summary: "Retrieve an evaluation",
    request: { params: IdParam },
    responses: { 200: json(Eval, "The evaluation"), ...errorResponses(401, 403, 404, 503) },
  }),
);

type Row = typeof evals.$inferSelect;

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

export function registerEvals(app: OpenAPIHono<AppEnv>) {
  app.openapi(run, async (c) => {
    const body = c.req.valid("json");
    const setId = body.eval_set_id.toLowerCase();
    const policyId = body.policy_id.toLowerCase();
    const [sets, found] = await c.var.tenant.batch((db) => [
      db.select().from(evalSets).where(eq(evalSets.id, setId)),
      db.select().from(policies).where(eq(policies.id, policyId)),
    ]);
    const set = sets[0];
    const policy = found[0];
    if (!set) throw new ApiError("not_found", [{ path: "eval_set_id", message: "no such set" }]);
    if (!policy)
      throw new ApiError("not_found", [{ path: "policy_id", message: "no such policy" }]);
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
    const id = newId();
    const [rows] = await c.var.tenant.batch((db) => [
      db
        .insert(evals)
        .values({
          id,
          evalSetId: set.id,
          evalSetName: set.name,
          policyId: policy.id,
          policyRules: policy.rules,
          positive: body.positive,
          caseCount: cases.length,
          ...score,
        })
        .returning(),
    ]);
    const row = rows[0];
    if (!row) throw new ApiError("internal_error");
    await record(c.env, await c.var.tenant.caller(), {
      type: "eval.completed",
      subject: { type: "eval", id },
      payload: toEval(row),
    });
    return c.json(toEval(row), 201);
  });

  app.openapi(list, async (c) => {
    const { limit, cursor, eval_set_id, policy_id } = c.req.valid("query");
    const after = decodeIdCursor(cursor);
    const [rows] = await c.var.tenant.batch((db) => [
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
    return c.json(
      page(rows.map(toSummary), limit, (e) => e.id),
      200,
    );
  });

  app.openapi(get, async (c) => {
    const id = rowId(c.req.valid("param").id);
    const row = await getById(c.var.tenant, evals, id);
    return c.json(toEval(row), 200);
  });
}
