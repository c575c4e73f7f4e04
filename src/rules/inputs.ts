import type { NormalizedRules } from "../assess/policy-rules";
import type { ActionKind, MandateFacts, MandateType } from "../assess/request";
import type { History, Identity, RiskInput } from "../assess/risk-model";
import { aggregateValues } from "./aggregates";
import type { AggregateSpec } from "./attributes";

/**
 * What the model read for an assessment, stored with it (`assessments.inputs`) so that a
 * backtest replays a policy over the inputs as they were, not as they are now: the agent's
 * trust then, its history then. Not stored: the policy (the backtest brings its own) and the
 * window counts, which depend on the policy's windows and are counted again from the history
 * as of the assessment's time. The client's `risk_data` is not kept beyond the country read
 * from it, nor the holder key beyond the identity it resolved to.
 */
export interface RecordedInputs {
  v: 1;
  mandate_type: MandateType | null;
  facts: Omit<MandateFacts, "riskData" | "holderKey">;
  identity: Identity;
  history: Omit<History, "windowCount">;
  geo: string | null;
  now: number;
}

export function recordInputs(input: RiskInput): RecordedInputs {
  const { riskData: _riskData, holderKey: _holderKey, ...facts } = input.facts;
  const { windowCount: _windowCount, ...history } = input.history;
  return {
    v: 1,
    mandate_type: input.mandateType,
    facts,
    identity: input.identity,
    history,
    geo: input.geo,
    now: input.now,
  };
}

/** Whether a stored value is inputs this version of the service can replay. */
export function isRecordedInputs(value: unknown): value is RecordedInputs {
  return typeof value === "object" && value !== null && (value as { v?: unknown }).v === 1;
}

/**
 * The model's input for replaying `rules` over a recorded assessment; `counted` holds the
 * window aggregates (the velocity window's count included) as of the assessment's time.
 */
export function replayInput(
  recorded: RecordedInputs,
  kind: ActionKind,
  hasCounterparty: boolean,
  rules: NormalizedRules,
  counted: Record<string, unknown> | null,
): RiskInput {
  const agent = recorded.identity.agent !== null;
  const specs = replaySpecs(rules);
  const values = aggregateValues(specs, counted, { agent, counterparty: hasCounterparty });
  const velocity = rules.velocity ? velocitySpec(rules.velocity.window_seconds) : null;
  return {
    kind,
    mandateType: recorded.mandate_type,
    facts: { ...recorded.facts, riskData: null, holderKey: null },
    identity: recorded.identity,
    rules,
    policyVersion: 0,
    history: {
      ...recorded.history,
      windowCount: velocity && agent ? (values[velocity.key] ?? 0) : null,
    },
    now: recorded.now,
    geo: recorded.geo,
    ...(rules.program?.aggregates.length ? { aggregates: values } : {}),
  };
}

/** The windows a replay must count: the rule list's, and the velocity limit's. */
export function replaySpecs(rules: NormalizedRules): AggregateSpec[] {
  const specs = [...(rules.program?.aggregates ?? [])];
  if (rules.velocity) {
    const velocity = velocitySpec(rules.velocity.window_seconds);
    if (!specs.some((spec) => spec.key === velocity.key)) specs.push(velocity);
  }
  return specs;
}

function velocitySpec(seconds: number): AggregateSpec {
  return { key: `count.agent.${seconds}`, measure: "count", per: "agent", seconds };
}
