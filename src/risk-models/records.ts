import { getTableColumns } from "drizzle-orm";
import { riskModels } from "../db/schema";
import { isoOrNull } from "../schemas/common";
import type { RiskModel, RiskModelMetrics } from "../schemas/risk-models";

/** A `risk_models` row as the domain handles it: never its org, and its parameters apart. */
export type RiskModelRow = Omit<typeof riskModels.$inferSelect, "orgId" | "params">;

/** The columns of the model object: every one but the org and the parameters (~90 KiB). */
export const { orgId: _org, params: _params, ...modelColumns } = getTableColumns(riskModels);

/** The row's targets as stored: the precisions the thresholds were chosen for. */
export interface Targets {
  review_precision: number;
  deny_precision: number;
}

/** The model object of the API (docs/risk-model.md): everything but the parameters. */
export function toRiskModel(row: RiskModelRow): RiskModel {
  return {
    id: row.id,
    object: "risk_model",
    livemode: row.livemode,
    status: row.status,
    version: row.version,
    created: row.createdAt.toISOString(),
    as_of: row.asOf.toISOString(),
    test_clock: row.testClockId,
    label_delay: row.labelDelaySeconds,
    training_window: row.trainingWindowSeconds,
    targets: row.targets as Targets,
    counts: (row.counts as RiskModel["counts"]) ?? null,
    features: (row.features as RiskModel["features"]) ?? null,
    metrics: (row.metrics as RiskModelMetrics | null) ?? null,
    failure_reason: row.failureReason,
    trained_at: isoOrNull(row.trainedAt),
    activated_at: isoOrNull(row.activatedAt),
    card: row.card,
  };
}
