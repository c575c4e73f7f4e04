import { and, eq, sql } from "drizzle-orm";
import type { Tenant } from "../auth/tenant";
import { riskModels } from "../db/schema";
import { ApiError, orNotFound } from "../errors";
import { type BoostedTrees, boostedProbability } from "../model/boosting";
import { FEATURE_NAMES, featureTable, historyHorizonMs } from "../model/features";
import { modelScore } from "../model/score";
import { type LabeledMetrics, LabeledTally } from "../policies/labeled-metrics";
import { DECISIONS, type Decision, type RiskModelStatus } from "../schemas/vocabulary";
import { type HistoryRow, readHistory } from "./history-read";

// A model replayed beside a policy's backtest (docs/risk-model.md, "Backtests"): over the same
// range's latest `limit` assessments that were payments, the model's probability from the
// payment history as it stood at each one (`featureTable`: the features the assess path and
// training compute, each label counting only from when it was known), its own verdict (the
// band of its score: review from 40, deny from 70, as on the assess path before the service's
// other signals and the policy's rules), against the decisions recorded and the labels known now.

export interface ModelBacktest {
  id: string;
  status: RiskModelStatus;
  version: number | null;
  /** Assessments the model scored: the range's payments (an assessment without an amount is not one). */
  scored: number;
  /** `matrix[recorded decision][the model's decision]`. */
  matrix: Record<Decision, Record<Decision, number>>;
  labeled: LabeledMetrics;
}

interface Thresholds {
  review: { probability: number };
  deny: { probability: number };
}

/** The model's own decision for a probability: its score's band. */
export function modelDecision(probability: number, thresholds: Thresholds): Decision {
  const score = modelScore(probability, {
    review: thresholds.review.probability,
    deny: thresholds.deny.probability,
  });
  return score >= 70 ? "deny" : score >= 40 ? "review" : "approve";
}

/**
 * Replays model `id` (trained, of the caller's mode: 404 otherwise, 409 without parameters)
 * over the range's latest `limit` assessments. Writes nothing.
 */
export async function backtestModel(
  tenant: Tenant,
  id: string,
  range: { from: string | null; to: string | null; limit: number },
): Promise<ModelBacktest> {
  const livemode = tenant.livemode;
  const to = range.to === null ? Date.now() : Date.parse(range.to);
  const [models, starts] = await tenant.batch((db) => [
    db
      .select({
        id: riskModels.id,
        status: riskModels.status,
        version: riskModels.version,
        params: riskModels.params,
        metrics: riskModels.metrics,
        labelDelaySeconds: riskModels.labelDelaySeconds,
      })
      .from(riskModels)
      .where(and(eq(riskModels.id, id), eq(riskModels.livemode, livemode))),
    // Where the range's latest `limit` assessments begin: the history to read starts there.
    db.execute(sql`select (extract(epoch from min(s.created_at)) * 1000)::float8 as start
      from (select a.created_at from assessments a
            where a.livemode = ${livemode} and a.amount is not null
              and a.created_at <= ${new Date(to).toISOString()}::timestamptz
              ${range.from === null ? sql`` : sql`and a.created_at >= ${range.from}::timestamptz`}
            order by a.id desc limit ${range.limit}) s`),
  ]);
  const model = orNotFound(models[0]);
  const thresholds = (model.metrics as { thresholds?: Thresholds } | null)?.thresholds;
  if (model.params === null || !thresholds) {
    throw new ApiError("risk_model_not_trained", [
      { path: "risk_model", message: "the model has no trained parameters (training or failed)" },
    ]);
  }
  const row = () => ({ approve: 0, review: 0, deny: 0 });
  const result: ModelBacktest = {
    id: model.id,
    status: model.status,
    version: model.version,
    scored: 0,
    matrix: { approve: row(), review: row(), deny: row() },
    labeled: new LabeledTally().metrics,
  };
  const start = (starts as unknown as { rows: { start: number | null }[] }).rows[0]?.start;
  if (start === null || start === undefined) return result;

  const labelDelayMs = model.labelDelaySeconds * 1000;
  const targets: number[] = [];
  const recorded: Decision[] = [];
  const labels: ("fraud" | "legitimate" | null)[] = [];
  let index = 0;
  const events = await readHistory(
    {
      livemode,
      from: Number(start) - historyHorizonMs({ labelDelayMs }),
      // Through `to` itself (the range's end is inclusive); labels as known now.
      asOf: to + 1,
      labelsKnownBy: Date.now(),
    },
    async (query) => {
      const [page] = await tenant.batch((db) => [db.execute(query)]);
      return (page as unknown as { rows: HistoryRow[] }).rows;
    },
    undefined,
    (r) => {
      const at = index++;
      if (!r.assessed || Number(r.t) < Number(start)) return;
      if (!DECISIONS.includes(r.decision as Decision)) return;
      targets.push(at);
      recorded.push(r.decision as Decision);
      labels.push(r.fraud !== null ? "fraud" : r.legit !== null ? "legitimate" : null);
    },
  );
  // The range may hold more payments at its start's instant than the limit: the latest `limit`.
  const skip = Math.max(0, targets.length - range.limit);
  const chosen = targets.slice(skip);
  const x = featureTable(events, chosen, { labelDelayMs });
  const width = FEATURE_NAMES.length;
  const tally = new LabeledTally();
  const trees = model.params as BoostedTrees;
  for (let r = 0; r < chosen.length; r++) {
    const probability = boostedProbability(trees, x.subarray(r * width, (r + 1) * width));
    const decision = modelDecision(probability, thresholds);
    const was = recorded[skip + r] as Decision;
    result.matrix[was][decision]++;
    tally.add(decision, labels[skip + r] ?? null);
  }
  result.scored = chosen.length;
  result.labeled = tally.metrics;
  return result;
}
