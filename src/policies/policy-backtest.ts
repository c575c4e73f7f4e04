import type { NormalizedRules } from "../assess/policy";
import { parsedPolicy } from "../assess/policy-cache";
import { replaySpecs } from "../assess/rules/inputs";
import type { Tenant } from "../auth/tenant";
import { getById } from "../db/pagination";
import { policies, riskModels } from "../db/schema";
import { type Env, modeOf } from "../env";
import { ApiError } from "../errors";
import {
  backtest,
  type HistoryRow,
  historyPage,
  MAX_BACKTEST_AGGREGATE_EVALUATIONS,
  type ReplayedModel,
  rowsWithin,
} from "./backtest";

/**
 * The risk model a backtest replays beside the policy: one of the caller's mode with
 * parameters (ready, shadow, active or retired); 404 for another org's or mode's, 400 for one
 * still training or failed.
 */
async function replayedModel(tenant: Tenant, id: string) {
  const model = await getById(tenant, riskModels, id.toLowerCase());
  if (model.params === null) {
    throw new ApiError("invalid_request", [
      { path: "risk_model", message: `the model has no parameters (status ${model.status})` },
    ]);
  }
  const metrics = model.metrics as { thresholds?: ReplayedModel["thresholds"] } | null;
  const row: ReplayedModel = {
    id: model.id,
    version: model.version,
    label_delay_seconds: model.labelDelaySeconds,
    thresholds: metrics?.thresholds ?? null,
    params: model.params,
  };
  return { row, summary: { id: model.id, status: model.status, version: model.version } };
}

/** The most history rows one backtest replays. */
export const MAX_BACKTEST_LIMIT = 100_000;

function readPage(
  tenant: Tenant,
  rules: NormalizedRules,
  q: Parameters<typeof historyPage>[1],
  model: ReplayedModel | null,
) {
  return async (cursor: string | null, size: number) => {
    const [result] = await tenant.batch((db) => [
      db.execute(historyPage(rules, q, cursor, size, model)),
    ]);
    return (result as unknown as { rows: HistoryRow[] }).rows;
  };
}

/**
 * Tests only (honoured when ENVIRONMENT is `test`): a small page, so that the suite's short
 * histories cross pages as long ones do.
 */
function testPageSize(env: Env): { pageSize?: number } {
  const size = Number(env.TEST_BACKTEST_PAGE_SIZE);
  return modeOf(env) === "test" && Number.isInteger(size) && size >= 1 ? { pageSize: size } : {};
}

/**
 * Replays the caller's mode's recorded assessments of a range against policy `id` and reports
 * what would have changed. Writes nothing.
 */
export async function backtestPolicy(
  tenant: Tenant,
  id: string,
  body: {
    from?: string | undefined;
    to?: string | undefined;
    limit: number;
    samples: number;
    risk_model?: string | undefined;
  },
) {
  const policy = await getById(tenant, policies, id);
  // Parsed once per (id, version) in the isolate, as on the assess path. Stored rules were
  // validated at creation; a later grammar that refuses them is our fault.
  const rules = parsedPolicy(policy);
  if (rules === "unreadable") throw new ApiError("internal_error");
  const livemode = tenant.livemode;
  const q = { livemode, from: body.from ?? null, to: body.to ?? null };
  const aggregates = replaySpecs(rules).length;
  const rows = rowsWithin(body.limit, aggregates);
  const model = body.risk_model ? await replayedModel(tenant, body.risk_model) : null;
  const result = await backtest(rules, readPage(tenant, rules, q, model?.row ?? null), {
    limit: rows,
    samples: body.samples,
    model: model?.row ?? null,
    ...testPageSize(tenant.env),
  });
  return {
    object: "policy_backtest" as const,
    policy: { id: policy.id, status: policy.status, version: policy.version },
    risk_model: model?.summary ?? null,
    livemode,
    from: q.from,
    to: q.to,
    limit: body.limit,
    ...result,
    truncated: result.has_more,
    limits: {
      rows,
      max_rows: MAX_BACKTEST_LIMIT,
      aggregates,
      max_aggregate_evaluations: MAX_BACKTEST_AGGREGATE_EVALUATIONS,
    },
  };
}
