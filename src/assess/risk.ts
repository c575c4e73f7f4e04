import { DECISIONS, type Decision as Verdict } from "../schemas/vocabulary";
import { scoreBehavior } from "./behavior";
import { type ModelAnswer, modelFindings } from "./learned-model";
import { networkSignals, networkSignalText } from "./network-signals";
import { APPROVE_BARRED_BY, overridesOf, ruleText } from "./overrides";
import { evaluatePolicy } from "./policy-rules";
import { type HttpSignatureEvidence, isProven } from "./risk-input";
import {
  type ComponentResult,
  type Confidences,
  compareSignals,
  confidenceOf,
  IDENTITY_ASSURANCE,
  type RiskInput,
  round2,
  SEVERITY_WEIGHTS,
  THRESHOLDS,
} from "./risk-model";
import { type CompiledRule, firstMatch } from "./rules/evaluate";
import type { RuleAction } from "./rules/grammar";
import {
  CATEGORIES,
  type RejectionReason,
  rejection,
  ruleRejection,
  SIGNAL_CATALOG,
  type Signal,
  signal,
} from "./signals";

/**
 * The scoring core of `POST /v1/assess`: pure and deterministic (no clock but `input.now`, no
 * randomness, no I/O), so that a replay, a backtest and the audit all get the same answer.
 * The model and its numbers: docs/risk-model.md.
 */

export const COMPONENTS = ["kya", "policy", "risk"] as const;
export type Component = (typeof COMPONENTS)[number];

export interface Decision {
  decision: Verdict;
  risk_level: "normal" | "elevated" | "highest";
  risk_score: number;
  reason: string;
  signals: Signal[];
  rejection_reasons: RejectionReason[];
  confidences: Confidences;
  /** The rule of the policy's rule list that matched (docs/rules.md); absent when none did. */
  rule?: MatchedRule;
}

export interface MatchedRule {
  id: string;
  /** 0-based position in the policy's rule list. */
  index: number;
  action: RuleAction;
}

/** The "kya" stage: who acts, and how well that is proven. */
export function scoreIdentity(input: RiskInput): ComponentResult {
  const { agent, method, key, card, conflict } = input.identity;
  const signals: Signal[] = [];
  const reasons: RejectionReason[] = [];
  if (agent === null) {
    // High: an action by an agent nobody can name is not approved on the score alone.
    signals.push(signal("agent_unknown", "high"));
  } else {
    if (agent.status === "revoked") {
      reasons.push(rejection("agent_revoked", `agent ${agent.id} is revoked`));
    }
    if (agent.status === "suspended") signals.push(signal("agent_suspended", "high"));
    if (agent.card_status === "invalid") signals.push(signal("agent_card_invalid", "low"));
    // Only for a known agent: with no agent, an unregistered key is what `agent_unknown` says.
    if (key === "unregistered") signals.push(signal("key_unregistered", "medium"));
  }
  if (key === "revoked") signals.push(signal("key_revoked", "high"));
  if (conflict) signals.push(signal("identity_conflict", "high"));
  // A card reference is a claim of identity: one that does not check out counts even when
  // no agent was found.
  if (card === "unverified") signals.push(signal("card_unverified", "medium"));
  if (card === "unknown") signals.push(signal("card_unknown", "medium"));
  signals.push(...httpSignatureSignals(input.httpSignature ?? null));
  // Only proof of possession earns a key's assurance; any other identification is a claim,
  // worth an explicit id's at most (docs/assess.md, "What each kind of evidence earns").
  const base =
    agent === null
      ? 0
      : isProven(input.identity)
        ? IDENTITY_ASSURANCE.key
        : Math.min(IDENTITY_ASSURANCE.explicit, IDENTITY_ASSURANCE[method ?? "none"]);
  const found = { signals, rejection_reasons: reasons };
  return { ...found, confidences: { agent_identity: confidenceOf(base, "identity", found) } };
}

/**
 * The agent's HTTP signature (docs/http-signatures.md): a replayed nonce is high, any other
 * failure medium; a verified key not shown to be the mandate's or card's agent is high (one
 * agent presenting another's mandate), and reviews at least (`overridesOf`).
 */
function httpSignatureSignals(evidence: HttpSignatureEvidence | null): Signal[] {
  if (evidence === null) return [];
  if (evidence.failure === "nonce_replayed") return [signal("http_signature_replayed", "high")];
  if (!evidence.verified) return [signal("http_signature_invalid", "medium")];
  if (evidence.binding === "mismatch") return [signal("http_signature_agent_mismatch", "high")];
  return [];
}

/** A stage's result, or the Error it threw (a non-Error throw is wrapped). */
export function attempt(stage: () => ComponentResult): ComponentResult | Error {
  try {
    return stage();
  } catch (error) {
    return error instanceof Error ? error : new Error(String(error));
  }
}

/**
 * All three stages with a learned model as the behaviour stage (a backtest replaying a model
 * beside a policy): `run` answers the model's probability, score and reasons, or throws, which
 * fails the stage as on the assess path.
 */
export function scoreActionWithModel(input: RiskInput, run: () => ModelAnswer): Decision {
  let model: ModelAnswer | undefined;
  const risk = attempt(() => {
    model = run();
    return modelFindings(model);
  });
  return decide(
    {
      kya: attempt(() => scoreIdentity(input)),
      policy: attempt(() => evaluatePolicy(input)),
      risk,
    },
    input,
    model,
  );
}

/** All three stages and the decision, for callers that need no per-stage timing (backtests). */
export function scoreAction(input: RiskInput): Decision {
  return decide(
    {
      kya: attempt(() => scoreIdentity(input)),
      policy: attempt(() => evaluatePolicy(input)),
      risk: attempt(() => scoreBehavior(input)),
    },
    input,
  );
}

const OWNED: Record<Component, (keyof Confidences)[]> = {
  kya: ["agent_identity"],
  policy: ["mandate_validity", "policy_adherence"],
  risk: ["behavioral_risk", "recipient_risk"],
};
const FAULT_TYPE = { kya: "kya_fault", policy: "policy_fault", risk: "risk_fault" } as const;
const LEVEL = { approve: "normal", review: "elevated", deny: "highest" } as const;
const FLOOR = { approve: 0, review: THRESHOLDS.review, deny: THRESHOLDS.deny } as const;
const VERB = { approve: "Approved", review: "Review", deny: "Denied" } as const;

/**
 * Combines the stages into the decision. The score sets a band; overrides can only raise it:
 * a revoked agent or any rejection reason denies, a faulty stage, a suspended agent, a revoked
 * key or an identity conflict reviews at least. The active policy's rule list (docs/rules.md)
 * runs over the stages' findings: its first matching rule denies (a rejection reason), reviews
 * (an override), or approves (the band no longer decides; the overrides still do). The score
 * is then lifted to the floor of the final band, so that score, level and decision never
 * disagree.
 */
export function decide(
  parts: Record<Component, ComponentResult | Error>,
  input: RiskInput,
  model?: LearnedScore,
): Decision {
  const faults = COMPONENTS.filter((component) => parts[component] instanceof Error);
  const results = COMPONENTS.flatMap((component) => {
    const part = parts[component];
    return part instanceof Error ? [] : [part];
  });
  const signals = strongestPerType([
    ...results.flatMap((result) => result.signals),
    ...faults.map((component) => signal(FAULT_TYPE[component], "high")),
    // Facts of the context read, like the overrides: they hold whichever stage failed.
    ...networkSignals(input.network),
  ]);
  const raw = model ? learnedRaw(model, signals) : handWeightedRaw(signals, input);
  const matched = matchRule(parts, input, raw, signals);
  // A rule list that cannot be evaluated is a fault of the policy stage, like any other.
  if (matched instanceof Error) return decide({ ...parts, policy: matched }, input, model);
  const reasons = ordered([
    ...results.flatMap((result) => result.rejection_reasons),
    ...(matched?.action === "deny" ? [ruleRejection(ruleText(matched))] : []),
  ]);
  // An approve rule (only ever matched over a review band, see matchRule) takes the band out of
  // the decision (the overrides still apply): the score is capped below review so that score,
  // level and decision still agree.
  const scored = matched?.action === "approve" ? Math.min(raw, THRESHOLDS.review - 1) : raw;
  const overrides = overridesOf(input, faults, reasons, signals, matched);
  const decision = overrides.reduce(
    (highest, override) => (rank(override.decision) > rank(highest) ? override.decision : highest),
    bandOf(scored),
  );
  const score = Math.max(scored, FLOOR[decision]);
  const cause = overrides.find((override) => override.decision === decision);
  const confidences = confidencesOf(parts);
  if (matched?.action === "deny") confidences.policy_adherence = 0;
  const because = cause?.because ?? scoreReason(decision, score, signals, input, matched);
  return {
    decision,
    risk_level: LEVEL[decision],
    risk_score: score,
    reason: `${VERB[decision]}: ${because}.`,
    signals,
    rejection_reasons: reasons,
    confidences,
    ...(matched ? { rule: { id: matched.id, index: matched.index, action: matched.action } } : {}),
  };
}

/** The learned model's score, when the org's mode has an active model (src/assess/learned-model.ts). */
export interface LearnedScore {
  score: number;
  /** The model learned from the network's counts (split on one of its network features). */
  readsNetwork?: boolean;
}

/** Without a learned model: the signals' weights and the agent's missing trust. */
function handWeightedRaw(signals: Signal[], input: RiskInput): number {
  const points = signals.reduce((sum, s) => sum + SEVERITY_WEIGHTS[s.severity], 0);
  return Math.min(100, points + trustPoints(input));
}

/**
 * With a learned model, its score stands for behaviour and recipient (it learned them from the
 * org's labels, and its signals only explain it), and for the network's counts when it learned
 * from them; what it cannot see still adds its weight: who acts and how well that is proven,
 * the mandate, the policy, a faulty stage, the network for a model that never used it.
 */
function learnedRaw(model: LearnedScore, signals: Signal[]): number {
  const points = signals
    .filter((s) => s.category !== "behavior" && s.category !== "recipient")
    .filter((s) => !(s.category === "network" && model.readsNetwork))
    .reduce((sum, s) => sum + SEVERITY_WEIGHTS[s.severity], 0);
  return Math.min(100, model.score + points);
}

/**
 * The first rule of the active policy's list that holds, read over the input and what the
 * stages found (the score before rules and overrides, its band, the signals); an Error when
 * the list cannot be evaluated. No rule runs when the policy stage itself failed.
 */
function matchRule(
  parts: Record<Component, ComponentResult | Error>,
  input: RiskInput,
  raw: number,
  signals: Signal[],
): CompiledRule | null | Error {
  const program = input.rules?.program;
  if (!program || parts.policy instanceof Error) return null;
  const types = new Set(signals.map((s) => s.type));
  // An approve rule lowers a review band only: never a deny band, and never over doubt about
  // who acts or what the mandate says. Such a rule is passed over, and later rules still run.
  const mayApprove =
    bandOf(raw) !== "deny" && ![...types].some((type) => APPROVE_BARRED_BY.has(type));
  try {
    return firstMatch(
      program,
      { input, score: raw, level: LEVEL[bandOf(raw)], signals: types },
      (rule) => rule.action !== "approve" || mayApprove,
    );
  } catch (error) {
    return error instanceof Error ? error : new Error(String(error));
  }
}

/** The band of a score: below 40 approve, 40–69 review, from 70 deny. */
export function bandOf(score: number): Verdict {
  if (score >= THRESHOLDS.deny) return "deny";
  return score >= THRESHOLDS.review ? "review" : "approve";
}

/**
 * Up to 20 points for an agent's missing trust; an unknown agent counts as trust 0, and so does
 * an agent named without proof of possession (its trust is not the claimant's to borrow).
 */
export function trustPoints(input: RiskInput): number {
  const trust = isProven(input.identity) ? (input.identity.agent?.trust_score ?? 0) : 0;
  return Math.round((100 - Math.min(100, Math.max(0, trust))) / 5);
}

function scoreReason(
  decision: Verdict,
  score: number,
  signals: Signal[],
  input: RiskInput,
  matched: CompiledRule | null,
) {
  if (decision === "approve" && matched?.action === "approve") return ruleText(matched);
  const top = signals[0];
  if (decision !== "approve" && top) {
    const text =
      networkSignalText(top.type, input.network) ??
      SIGNAL_CATALOG[top.type as keyof typeof SIGNAL_CATALOG]?.text ??
      top.type;
    return `risk score ${score}, mainly because ${text}`;
  }
  const who = input.identity.agent === null ? "unidentified agent" : "known agent";
  return input.rules === null ? `${who}; no active policy` : `${who} within policy`;
}

function rank(decision: Verdict): number {
  return DECISIONS.indexOf(decision);
}

/** One signal per category and type, at its highest severity, in the canonical order. */
function strongestPerType(signals: Signal[]): Signal[] {
  const byType = new Map<string, Signal>();
  for (const s of signals) {
    const id = `${s.category}/${s.type}`;
    const seen = byType.get(id);
    if (!seen || compareSignals(s, seen) < 0) byType.set(id, s);
  }
  return [...byType.values()].sort(compareSignals);
}

/** One reason per key, identity first, then mandate, then policy; in found order within. */
function ordered(reasons: RejectionReason[]): RejectionReason[] {
  const unique = reasons.filter(
    (reason, index) => reasons.findIndex((other) => other.key === reason.key) === index,
  );
  return unique.sort((a, b) => CATEGORIES.indexOf(a.category) - CATEGORIES.indexOf(b.category));
}

/** Each stage's own dimensions; 0 for a faulty stage or a value it did not give. */
function confidencesOf(parts: Record<Component, ComponentResult | Error>): Confidences {
  const confidences = {} as Confidences;
  for (const component of COMPONENTS) {
    const part = parts[component];
    for (const dimension of OWNED[component]) {
      const value = part instanceof Error ? 0 : (part.confidences[dimension] ?? 0);
      confidences[dimension] = Number.isFinite(value) ? round2(Math.min(1, Math.max(0, value))) : 0;
    }
  }
  return confidences;
}
