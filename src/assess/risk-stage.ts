/**
 * The assessment's scoring stages around `decide` (docs/architecture.md, "The assess path"):
 * the behaviour stage (the org's learned model or the hand-weighted one), the shadow model's
 * would-be answer, and the fault boundary every component runs inside, so a component that
 * fails degrades the verdict (never approve) instead of failing the request.
 */
import { type Env, modeOf } from "../env";
import { logError } from "../lib/log";
import type { NetworkOutcome } from "../schemas/assessments";
import type { ShadowModelVerdict } from "../schemas/shadow";
import { scoreBehavior } from "./behavior";
import type { AssessContext } from "./input";
import { type ModelAnswer, type ModelPayment, modelFindings, runModel } from "./learned-model";
import { counterpartyKey } from "./payment-keys";
import type { ParsedAssessRequest } from "./request";
import { decide } from "./risk";
import type { ComponentResult, RiskInput } from "./risk-model";

/**
 * The behaviour stage: the org's active learned model for a payment when its mode has one
 * (src/assess/learned-model.ts), else the hand-weighted behaviour model. Either way a fault
 * degrades the stage (at least `review`), never the request.
 */
export function riskStage(
  input: RiskInput,
  context: AssessContext,
  payment: ModelPayment | null,
  faults: Set<string>,
): { part: ComponentResult | Error; model: ModelAnswer | null } {
  const active = context.models?.active;
  if (!active || !payment || !context.models) {
    return { part: component("risk", faults, () => scoreBehavior(input)), model: null };
  }
  const models = context.models;
  let model: ModelAnswer | null = null;
  const part = component("risk", faults, () => {
    model = runModel(active, models, payment);
    return modelFindings(model);
  });
  return { part, model: part instanceof Error ? null : model };
}

/**
 * The shadow model's would-be answer: its probability and the decision the assessment would
 * have had with it active (the same stages, rules and overrides). A shadow that cannot run is
 * left out: it never touches the verdict.
 */
export function shadowModelVerdict(
  context: AssessContext,
  payment: ModelPayment | null,
  parts: { kya: ComponentResult | Error; policy: ComponentResult | Error },
  input: RiskInput,
): ShadowModelVerdict | null {
  const shadow = context.models?.shadow;
  if (!shadow || !payment || !context.models) return null;
  try {
    const model = runModel(shadow, context.models, payment);
    const would = decide({ ...parts, risk: modelFindings(model) }, input, model);
    return {
      id: model.id,
      version: model.version,
      probability: model.probability,
      risk_score: would.risk_score,
      decision: would.decision,
    };
  } catch (error) {
    logError("shadow risk model failed", { model: shadow.id, error: String(error) });
    return null;
  }
}

/** A payment the learned model can score: one with an amount. */
export function modelPayment(
  request: ParsedAssessRequest,
  now: number,
  network: NetworkOutcome | null,
): ModelPayment | null {
  const amount = request.facts.amount?.amount;
  if (amount === undefined || amount === null) return null;
  return { time: now, amount, payee: counterpartyKey(request), network };
}

/**
 * A component that throws degrades the assessment instead of failing it: `decide` turns the
 * error into a `system` signal and never approves.
 */
export function component(
  name: string,
  faults: Set<string>,
  run: () => ComponentResult,
): ComponentResult | Error {
  try {
    if (faults.has(name)) throw new Error(`injected fault: ${name}`);
    return run();
  } catch (error) {
    logError("assess component failed", { component: name, error: String(error) });
    return error instanceof Error ? error : new Error(String(error));
  }
}

/**
 * Fault injection for the test suite only: `TEST_FAULTS` (comma-separated component names)
 * is honoured when ENVIRONMENT is `test` and ignored everywhere else.
 */
export function injectedFaults(env: Env): Set<string> {
  if (modeOf(env) !== "test" || !env.TEST_FAULTS) return new Set();
  return new Set(env.TEST_FAULTS.split(","));
}
