import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { desc, eq, lt } from "drizzle-orm";
import { evalSets } from "../db/schema";
import type { Tenant } from "../db/tenant";
import { ApiError, orNotFound } from "../errors";
import type { AppEnv } from "../http/context";
import { decodeIdCursor, getById, page } from "../http/pagination";
import { guarded } from "../http/route";
import { errorResponses, IdParam, json, jsonBody, rowId } from "../http/schemas";
import { record } from "../ledger/ledger";
import { newId } from "../lib/ids";
import { EvalCase, MAX_CASES, parseCases, resolveCases } from "../rules/eval-cases";
import { casesOf, FromHistory, type LabeledRow, labeledHistory } from "../rules/eval-history";
import { listOf, PageQuery, plainText } from "../schemas/common";

const CreateEvalSet = z
  .strictObject({
    name: plainText(200),
    description: plainText(1000).optional(),
    cases: z.array(EvalCase).min(1).max(MAX_CASES).optional(),
    from_history: FromHistory.optional().openapi({
      description: "Build the cases from labeled assessments instead (docs/feedback.md)",
    }),
  })
  .refine((body) => (body.cases === undefined) !== (body.from_history === undefined), {
    path: ["cases"],
    message: "give exactly one of cases and from_history",
  })
  .openapi("CreateEvalSetRequest");

const summaryFields = {
  object: z.literal("eval_set"),
  id: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  case_count: z.int(),
  created: z.string(),
};
const EvalSetSummary = z.object(summaryFields).openapi("EvalSetSummary");
const EvalSet = z.object({ ...summaryFields, cases: z.array(EvalCase) }).openapi("EvalSet", {
  description: "The cases as stored: defaults filled in, `at` and `geo` resolved",
});
const Deleted = z
  .object({ object: z.literal("eval_set"), id: z.string(), deleted: z.literal(true) })
  .openapi("DeletedEvalSet");

const tags = ["Evaluations"];

const create = createRoute(
  guarded(
    "policy:write",
    {
      method: "post",
      path: "/v1/eval-sets",
      tags,
      summary: "Create an evaluation set: labeled cases to score policies against",
      description:
        "Each case's request is validated as `POST /v1/assess` validates it; a fault is a 400 " +
        "naming `cases.<i>.request.<path>`. With `from_history` the cases are the labeled " +
        "assessments of the range; none is a 422 `no_labeled_history`.",
      request: { body: jsonBody(CreateEvalSet) },
      responses: { 201: json(EvalSet, "The set"), ...errorResponses(400, 401, 403, 422, 503) },
    },
    { liveOnly: true },
  ),
);

const list = createRoute(
  guarded("policy:read", {
    method: "get",
    path: "/v1/eval-sets",
    tags,
    summary: "List evaluation sets, newest first (without their cases)",
    request: { query: PageQuery },
    responses: {
      200: json(listOf(EvalSetSummary, "EvalSetList"), "A page of sets"),
      ...errorResponses(400, 401, 403, 503),
    },
  }),
);

const get = createRoute(
  guarded("policy:read", {
    method: "get",
    path: "/v1/eval-sets/{id}",
    tags,
    summary: "Retrieve an evaluation set with its cases",
    request: { params: IdParam },
    responses: { 200: json(EvalSet, "The set"), ...errorResponses(401, 403, 404, 503) },
  }),
);

const remove = createRoute(
  guarded(
    "policy:write",
    {
      method: "delete",
      path: "/v1/eval-sets/{id}",
      tags,
      summary: "Delete an evaluation set (its evaluations remain)",
      request: { params: IdParam },
      responses: { 200: json(Deleted, "Deleted"), ...errorResponses(401, 403, 404, 503) },
    },
    { liveOnly: true },
  ),
);

type Row = typeof evalSets.$inferSelect;

/** The columns of a summary: a list never reads the cases. */
const summaryColumns = {
  id: evalSets.id,
  name: evalSets.name,
  description: evalSets.description,
  caseCount: evalSets.caseCount,
  createdAt: evalSets.createdAt,
};
type SummaryRow = Pick<Row, keyof typeof summaryColumns>;

function summary(row: SummaryRow): z.infer<typeof EvalSetSummary> {
  return {
    object: "eval_set",
    id: row.id,
    name: row.name,
    description: row.description,
    case_count: row.caseCount,
    created: row.createdAt.toISOString(),
  };
}

function toEvalSet(row: Row): z.infer<typeof EvalSet> {
  return { ...summary(row), cases: row.cases as EvalCase[] };
}

/** The cases of `from_history`, or 422 when the range holds no labeled assessment. */
async function historyCases(tenant: Tenant, q: FromHistory | undefined): Promise<EvalCase[]> {
  if (q === undefined) throw new ApiError("internal_error");
  const [result] = await tenant.batch((db) => [db.execute(labeledHistory(q, tenant.livemode))]);
  const cases = casesOf((result as unknown as { rows: LabeledRow[] }).rows);
  if (cases.length === 0) {
    throw new ApiError("no_labeled_history", {
      message: "no assessment of the range has an effective label among those asked for",
      labels: q.labels,
      from: q.from ?? null,
      to: q.to ?? null,
    });
  }
  return cases;
}

export function registerEvalSets(app: OpenAPIHono<AppEnv>) {
  app.openapi(create, async (c) => {
    const body = c.req.valid("json");
    const created = new Date();
    const given = body.cases ?? (await historyCases(c.var.tenant, body.from_history));
    const cases = resolveCases(given, parseCases(given), created);
    const id = newId(created.getTime());
    const [rows] = await c.var.tenant.batch((db) => [
      db
        .insert(evalSets)
        .values({
          id,
          name: body.name,
          description: body.description ?? null,
          cases,
          caseCount: cases.length,
          createdAt: created,
        })
        .returning(),
    ]);
    const row = rows[0];
    if (!row) throw new ApiError("internal_error");
    await record(c.env, await c.var.tenant.caller(), {
      type: "eval_set.created",
      subject: { type: "eval_set", id },
      payload: toEvalSet(row),
    });
    return c.json(toEvalSet(row), 201);
  });

  app.openapi(list, async (c) => {
    const { limit, cursor } = c.req.valid("query");
    const after = decodeIdCursor(cursor);
    const [rows] = await c.var.tenant.batch((db) => [
      db
        .select(summaryColumns)
        .from(evalSets)
        .where(after ? lt(evalSets.id, after) : undefined)
        .orderBy(desc(evalSets.id))
        .limit(limit + 1),
    ]);
    return c.json(
      page(rows.map(summary), limit, (s) => s.id),
      200,
    );
  });

  app.openapi(get, async (c) => {
    const id = rowId(c.req.valid("param").id);
    const row = await getById(c.var.tenant, evalSets, id);
    return c.json(toEvalSet(row), 200);
  });

  app.openapi(remove, async (c) => {
    const id = rowId(c.req.valid("param").id);
    const [rows] = await c.var.tenant.batch((db) => [
      db.delete(evalSets).where(eq(evalSets.id, id)).returning(summaryColumns),
    ]);
    const row = orNotFound(rows[0]);
    await record(c.env, await c.var.tenant.caller(), {
      type: "eval_set.deleted",
      subject: { type: "eval_set", id },
      payload: summary(row),
    });
    return c.json({ object: "eval_set" as const, id, deleted: true as const }, 200);
  });
}
