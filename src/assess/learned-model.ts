// The learned risk model on the assess path (issue 39; docs/risk-model.md, "The learned
// model"): the context read brings the active (and shadow) model of the mode with the agent's
// and the payee's history; this computes the features with the code the trainer ran
// (src/model/features.ts), the probability, the 0–100 score it maps to, and the signals naming
// the features that raised it. Pure but for the isolate's model cache.

import { type BoostedTrees, boostedProbability } from "../model/boosting";
import { NETWORK_FEATURES_FROM, type NetworkCounts, paymentFeatures } from "../model/features";
import { modelScore, topContributions } from "../model/score";
import type { ModelContext, ModelRow } from "./input";
import type { ComponentResult } from "./risk-model";
import { type Severity, type Signal, type SignalType, signal } from "./signals";

/**
 * Parsed models by id, so the parameters (~90 KiB of JSON) cross the wire once per isolate:
 * the context read is told which ids this isolate holds and sends the parameters of no other.
 * Small: an org has one active and one shadow model per mode.
 */
const held = new Map<string, BoostedTrees>();
const HELD_MAX = 32;

/** The ids whose parameters this isolate holds, as the context read takes them. */
export function modelsHeld(): string | null {
  return held.size === 0 ? null : [...held.keys()].join(",");
}

function treesOf(row: ModelRow): BoostedTrees {
  const cached = held.get(row.id);
  if (cached) return cached;
  if (!isTrees(row.params)) {
    // Held when the read was sent, dropped since: the stage fails and the assessment is at
    // least `review` (never an approval on a model it could not run).
    throw new Error(`risk model ${row.id}: parameters missing`);
  }
  if (held.size >= HELD_MAX) held.delete(held.keys().next().value as string);
  held.set(row.id, row.params);
  return row.params;
}

function isTrees(value: unknown): value is BoostedTrees {
  return (
    typeof value === "object" &&
    value !== null &&
    (value as BoostedTrees).kind === "boosted_trees" &&
    Array.isArray((value as BoostedTrees).trees)
  );
}

/** What the model said of one assessment. */
export interface ModelAnswer {
  id: string;
  version: number | null;
  /** The fraud probability, 4 decimals. */
  probability: number;
  /** The 0–100 risk score it maps to (monotone; the model's thresholds are the bands' edges). */
  score: number;
  /** The features that raised the probability most, as signals. */
  signals: Signal[];
  /** The model split on the network's counts: it scores them (src/assess/risk.ts, learnedRaw). */
  readsNetwork: boolean;
}

/** The payment being assessed, as the features see it. */
export interface ModelPayment {
  time: number;
  amount: number;
  /** The counterparty digest, as history stores it. */
  payee: string | null;
  /** `outcome.network`'s counts; null when the org's mode does not consume (zeros). */
  network?: NetworkCounts | null;
}

/** The model's answer for a payment, from the history the context read returned. */
export function runModel(row: ModelRow, models: ModelContext, payment: ModelPayment): ModelAnswer {
  const trees = treesOf(row);
  const labelDelayMs = row.label_delay_seconds * 1000;
  const payee = payment.payee ?? "";
  const features = paymentFeatures(
    { time: payment.time, amount: payment.amount, payee },
    models.agentPast.map(([time, amount, to]) => ({ time, amount, payee: to ?? "" })),
    models.payeePast.map(([time, known]) => ({ time, fraudKnownAt: known })),
    { labelDelayMs },
    payment.network,
  );
  // Rounded as answered: the training chose its thresholds among 4-decimal probabilities, so
  // the score agrees with the `probability` the Outcome shows.
  const probability = Math.round(boostedProbability(trees, features) * 10_000) / 10_000;
  const thresholds = {
    review: row.thresholds?.review.probability ?? 1,
    deny: row.thresholds?.deny.probability ?? 1,
  };
  return {
    id: row.id,
    version: row.version,
    probability,
    score: modelScore(probability, thresholds),
    signals: reasonSignals(trees, features),
    readsNetwork: readsNetwork(trees),
  };
}

/** Whether any split of the model is on one of the network's counts. */
function readsNetwork(trees: BoostedTrees): boolean {
  for (let f = NETWORK_FEATURES_FROM; f < trees.importance.length; f++) {
    if ((trees.importance[f] ?? 0) > 0) return true;
  }
  return false;
}

/** What the learned model found, as the behaviour stage's result: its reasons, its confidence. */
export function modelFindings(model: ModelAnswer): ComponentResult {
  const confidence = 1 - model.probability;
  return {
    signals: model.signals,
    rejection_reasons: [],
    confidences: { behavioral_risk: confidence, recipient_risk: confidence },
  };
}

/** Which reason a feature speaks to: one signal per group, at the strength of its features. */
const GROUP_OF: Record<string, SignalType> = {
  amount: "model_amount_unusual",
  agent_mean_amount_1d: "model_amount_unusual",
  agent_mean_amount_7d: "model_amount_unusual",
  agent_mean_amount_30d: "model_amount_unusual",
  agent_amount_ratio_30d: "model_amount_unusual",
  agent_amount_z_30d: "model_amount_unusual",
  agent_amount_ratio_1d: "model_amount_unusual",
  agent_amount_ratio_median_30d: "model_amount_unusual",
  agent_max_ratio_median_7d: "model_amount_unusual",
  agent_count_1d: "model_agent_velocity",
  agent_count_7d: "model_agent_velocity",
  agent_count_30d: "model_agent_velocity",
  weekend: "model_time_unusual",
  night: "model_time_unusual",
  payee_new_for_agent: "model_payee_new",
  payee_count_1d: "model_payee_activity",
  payee_count_7d: "model_payee_activity",
  payee_count_30d: "model_payee_activity",
  payee_fraud_share_since_first: "model_payee_fraud",
  network_payee_fraud_orgs: "model_network_fraud",
  network_payee_legitimate_orgs: "model_network_fraud",
  network_agent_key_fraud_orgs: "model_network_fraud",
  network_agent_key_legitimate_orgs: "model_network_fraud",
  network_issuer_fraud_orgs: "model_network_fraud",
  network_instrument_fraud_orgs: "model_network_fraud",
};

/** Every signal the model's reasons can be: the groups, and the payee's fraud history. */
export const MODEL_SIGNAL_TYPES: readonly SignalType[] = [
  ...new Set([...Object.values(GROUP_OF), "model_payee_fraud" as const]),
];

/** Log-odds a group must add before it is named, and the severities above it. */
const NAMED_FROM = 0.5;
function severityOf(logOdds: number): Severity {
  if (logOdds >= 3) return "critical";
  if (logOdds >= 2) return "high";
  return logOdds >= 1 ? "medium" : "low";
}

/**
 * The reasons a person can read: the features' contributions to the log-odds (path
 * attribution), summed per group (the payee's fraud history, the amount against the agent's
 * usual, ...), the groups that raised it by at least NAMED_FROM, strongest first.
 */
function reasonSignals(trees: BoostedTrees, features: Float64Array): Signal[] {
  const groups = new Map<SignalType, number>();
  for (const { name, contribution } of topContributions(trees, features, features.length)) {
    const group = GROUP_OF[name] ?? "model_payee_fraud";
    groups.set(group, (groups.get(group) ?? 0) + contribution);
  }
  return [...groups.entries()]
    .filter(([, logOdds]) => logOdds >= NAMED_FROM)
    .sort((a, b) => b[1] - a[1])
    .map(([type, logOdds]) => signal(type, severityOf(logOdds)));
}
