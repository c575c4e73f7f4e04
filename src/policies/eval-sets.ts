import type { z } from "@hono/zod-openapi";
import { desc, eq, lt } from "drizzle-orm";
import type { Tenant } from "../auth/tenant";
import { decodeIdCursor, getById, type Page, page } from "../db/pagination";
import { evalSets } from "../db/schema";
import { ApiError, orNotFound } from "../errors";
import { commit } from "../ledger/commit";
import { newId } from "../lib/ids";
import { type EvalCase, parseCases, resolveCases } from "./eval-cases";
import { casesOf, type FromHistory, type LabeledRow, labeledHistory } from "./eval-history";
import type { CreateEvalSet, EvalSet, EvalSetSummary } from "./eval-set-schemas";

type Row = Omit<typeof evalSets.$inferSelect, "orgId">;

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

/**
 * Stores a set of labeled cases (given, or built from the labeled history) and records
 * `eval_set.created` with it, in one transaction.
 */
export async function createEvalSet(
  tenant: Tenant,
  body: z.infer<typeof CreateEvalSet>,
): Promise<z.infer<typeof EvalSet>> {
  const created = new Date();
  const given = body.cases ?? (await historyCases(tenant, body.from_history));
  const cases = resolveCases(given, parseCases(given), created);
  const id = newId(created.getTime());
  const values = {
    id,
    name: body.name,
    description: body.description ?? null,
    cases,
    caseCount: cases.length,
    createdAt: created,
  };
  const { results } = await commit(
    tenant,
    { type: "eval_set.created", subject: { type: "eval_set", id }, payload: toEvalSet(values) },
    (db) => [db.insert(evalSets).values(values).returning()],
  );
  const row = results[0][0];
  if (!row) throw new ApiError("internal_error");
  return toEvalSet(row);
}

/** A page of the org's sets, newest first, without their cases. */
export async function listEvalSets(
  tenant: Tenant,
  query: { limit: number; cursor?: string | undefined },
): Promise<Page<z.infer<typeof EvalSetSummary>>> {
  const { limit, cursor } = query;
  const after = decodeIdCursor(cursor);
  const [rows] = await tenant.batch((db) => [
    db
      .select(summaryColumns)
      .from(evalSets)
      .where(after ? lt(evalSets.id, after) : undefined)
      .orderBy(desc(evalSets.id))
      .limit(limit + 1),
  ]);
  return page(rows.map(summary), limit, (s) => s.id);
}

/** One set with its cases (404 otherwise). */
export async function getEvalSet(tenant: Tenant, id: string): Promise<z.infer<typeof EvalSet>> {
  return toEvalSet(await getById(tenant, evalSets, id));
}

/**
 * Deletes a set (its evaluations remain) and records `eval_set.deleted` with the deletion, in
 * one transaction; once per set, so of racing deletes one records it and the others find none.
 */
export async function deleteEvalSet(tenant: Tenant, id: string): Promise<void> {
  const [found] = await tenant.batch((db) => [
    db.select(summaryColumns).from(evalSets).where(eq(evalSets.id, id)),
  ]);
  const existing = orNotFound(found[0]);
  const { results } = await commit(
    tenant,
    {
      type: "eval_set.deleted",
      subject: { type: "eval_set", id },
      payload: summary(existing),
      once: [`eval_set.deleted:${id}`],
    },
    (db) => [db.delete(evalSets).where(eq(evalSets.id, id)).returning({ id: evalSets.id })],
  );
  orNotFound(results[0][0]);
}
