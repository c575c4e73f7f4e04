import { payloadDigest } from "#audit/digest";
import { trainRiskModel } from "../model/training";
import type { TrainingEvent } from "../model/training-set";
import type { RiskModelRow, Targets } from "./records";

/** What a training run came to: the trained model's numbers, or why there is none. */
export type TrainingOutcome =
  | {
      status: "ready";
      params: unknown;
      paramsDigest: string;
      counts: unknown;
      features: unknown;
      metrics: unknown;
    }
  | { status: "failed"; reason: string; counts?: unknown };

/**
 * Trains `row` on `events` (pure: the consumer and `npm run bench:training` run it). An
 * exception of the trainer is a failure of this model, not of the consumer: the same data
 * would throw again.
 */
export function trainingOutcome(
  events: readonly TrainingEvent[],
  row: RiskModelRow,
): TrainingOutcome {
  const targets = row.targets as Targets;
  let result: ReturnType<typeof trainRiskModel>;
  try {
    result = trainRiskModel(events, {
      asOf: row.asOf.getTime(),
      labelDelayMs: row.labelDelaySeconds * 1000,
      trainingWindowMs: row.trainingWindowSeconds * 1000,
      reviewPrecision: targets.review_precision,
      denyPrecision: targets.deny_precision,
    });
  } catch (error) {
    return { status: "failed", reason: `training failed: ${String(error)}` };
  }
  if (result.status === "failed") {
    return { status: "failed", reason: result.reason, counts: result.counts };
  }
  // The parameters as they are stored and served (JSON), digested in their RFC 8785 form.
  const params = JSON.parse(JSON.stringify(result.model)) as unknown;
  return {
    status: "ready",
    params,
    paramsDigest: payloadDigest(params),
    counts: result.counts,
    features: result.features,
    metrics: result.metrics,
  };
}
