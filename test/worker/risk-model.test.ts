import { describe, expect, it } from "vitest";
import { scoreBehavior } from "../../src/assess/behavior";
import type { OpenMandateLimits } from "../../src/assess/facts";
import { normalizeRules } from "../../src/assess/policy";
import { evaluatePolicy } from "../../src/assess/policy-rules";
import {
  bandOf,
  COMPONENTS,
  decide,
  scoreAction,
  scoreIdentity,
  trustPoints,
} from "../../src/assess/risk";
import type { Signal } from "../../src/assess/signals";
import {
  AGENT_ID,
  both,
  type Change,
  clean,
  given,
  limits,
  nothing,
  part,
  withRules,
} from "./support/risk";

describe("a clean action", () => {
  it("is approved with score 0, no signals and full confidence", () => {
    expect(scoreAction(clean())).toEqual({
      decision: "approve",
      risk_level: "normal",
      risk_score: 0,
      reason: "Approved: known agent within policy.",
      signals: [],
      rejection_reasons: [],
      confidences: {
        agent_identity: 1,
        mandate_validity: 1,
        policy_adherence: 1,
        behavioral_risk: 1,
        recipient_risk: 1,
      },
    });
  });

  it("says so when the org has no active policy", () => {
    const decision = scoreAction(given((input) => (input.rules = null)));
    expect(decision.reason).toBe("Approved: known agent; no active policy.");
  });
});

const high: Signal = { category: "behavior", type: "amount_above_usual", severity: "high" };
const critical: Signal = { category: "behavior", type: "amount_above_usual", severity: "critical" };

describe("overrides", () => {
  it("a revoked agent is denied even with a perfect score", () => {
    const input = given((i) => (i.identity.agent!.status = "revoked"));
    const decision = decide({ kya: nothing, policy: nothing, risk: nothing }, input);
    expect(decision).toMatchObject({
      decision: "deny",
      risk_level: "highest",
      risk_score: 70,
      reason: `Denied: agent ${AGENT_ID} is revoked.`,
    });
  });

  it("a revoked agent is denied even when kya faulted", () => {
    const input = given((i) => (i.identity.agent!.status = "revoked"));
    const decision = decide({ kya: new Error("x"), policy: nothing, risk: nothing }, input);
    expect(decision.decision).toBe("deny");
  });

  it.each(COMPONENTS)("a fault in %s is never approved, and zeroes its confidences", (faulty) => {
    const input = clean();
    const parts = {
      kya: scoreIdentity(input),
      policy: evaluatePolicy(input),
      risk: scoreBehavior(input),
    };
    const decision = decide({ ...parts, [faulty]: new Error("boom") }, input);
    expect(decision).toMatchObject({
      decision: "review",
      risk_level: "elevated",
      risk_score: 40,
      reason: `Review: internal fault in ${faulty}; never approved while a component is faulty.`,
      signals: [{ category: "system", type: `${faulty}_fault`, severity: "high" }],
    });
    const zeroed = Object.entries(decision.confidences).filter(([, value]) => value === 0);
    const owned = { kya: 1, policy: 2, risk: 2 }[faulty];
    expect(zeroed).toHaveLength(owned);
  });

  it("a stage that throws is a fault, not a crash", () => {
    const input = given((i) => {
      i.facts.limits = { constraints: null } as unknown as OpenMandateLimits;
    });
    const decision = scoreAction(input);
    expect(decision.decision).toBe("review");
    expect(decision.signals).toContainEqual({
      category: "system",
      type: "policy_fault",
      severity: "high",
    });
  });

  it("a fault never lowers a deny", () => {
    const input = given(withRules({ currencies: ["USD"] }));
    const decision = decide(
      { kya: nothing, policy: evaluatePolicy(input), risk: new Error() },
      input,
    );
    expect(decision.decision).toBe("deny");
  });

  it.each<[string, Change]>([
    ["suspended agent", (i) => (i.identity.agent!.status = "suspended")],
    ["revoked key", (i) => (i.identity.key = "revoked")],
    ["identity conflict", (i) => (i.identity.conflict = true)],
    [
      "HTTP signature key of another agent",
      (i) => (i.httpSignature = { verified: true, failure: null, binding: "mismatch" }),
    ],
  ])("reviews at least, whatever the score: %s", (_, change) => {
    const decision = decide({ kya: nothing, policy: nothing, risk: nothing }, given(change));
    expect(decision).toMatchObject({ decision: "review", risk_score: 40 });
  });

  it("states the override that decided", () => {
    const suspended = given((i) => (i.identity.agent!.status = "suspended"));
    expect(scoreAction(suspended).reason).toBe(`Review: agent ${AGENT_ID} is suspended.`);
    const conflict = given((i) => (i.identity.conflict = true));
    expect(scoreAction(conflict).reason).toBe("Review: the identity evidence names two agents.");
  });
});

describe("score and thresholds", () => {
  const trust = (score: number) => given((i) => (i.identity.agent!.trust_score = score));

  it.each<[string, Signal, number, number, string, string]>([
    // high 30 + round((100 - 55) / 5) = 39; with trust 50: 40.
    ["high at trust 55 scores 39", high, 55, 39, "approve", "normal"],
    ["high at trust 50 scores 40", high, 50, 40, "review", "elevated"],
    // critical 60 + 9 = 69; + 10 = 70.
    ["critical at trust 55 scores 69", critical, 55, 69, "review", "elevated"],
    ["critical at trust 50 scores 70", critical, 50, 70, "deny", "highest"],
  ])("%s", (_, signal, trustScore, score, verdict, level) => {
    const decision = decide(
      { kya: nothing, policy: nothing, risk: part([signal]) },
      trust(trustScore),
    );
    expect(decision).toMatchObject({ risk_score: score, decision: verdict, risk_level: level });
  });

  it.each([
    [0, "approve"],
    [39, "approve"],
    [40, "review"],
    [69, "review"],
    [70, "deny"],
    [100, "deny"],
  ])("score %i is in the %s band", (score, verdict) => {
    expect(bandOf(score)).toBe(verdict);
  });

  it("weighs low 5, medium 15, high 30, critical 60, capped at 100", () => {
    const s = (severity: Signal["severity"], type: string): Signal => ({
      category: "behavior",
      type,
      severity,
    });
    const score = (signals: Signal[]) =>
      decide({ kya: nothing, policy: nothing, risk: part(signals) }, clean()).risk_score;
    expect(score([s("low", "a")])).toBe(5);
    expect(score([s("medium", "a")])).toBe(15);
    expect(score([s("low", "a"), s("high", "b")])).toBe(35);
    expect(score([s("critical", "a"), s("critical", "b")])).toBe(100);
  });

  it.each<[string, Change]>([
    ["a decoded cnf.jwk key", (i) => (i.identity.proven = false)],
    [
      "an explicit agent id",
      (i) => Object.assign(i.identity, { method: "explicit", proven: false }),
    ],
    ["a stored input without `proven`", (i) => delete i.identity.proven],
  ])("counts an agent named by %s (a claim) as trust 0: 20 points", (_, change) => {
    const proven = given((i) => (i.identity.agent!.trust_score = 100));
    const claimed = given((i) => {
      i.identity.agent!.trust_score = 100;
      change(i);
    });
    expect(trustPoints(proven)).toBe(0);
    expect(trustPoints(claimed)).toBe(20);
    expect(scoreAction(claimed).risk_score).toBe(scoreAction(proven).risk_score + 20);
  });

  it("counts an unknown agent as trust 0: 20 points, with agent_unknown 50: review", () => {
    const input = given((i) => Object.assign(i.identity, { agent: null, method: null }));
    expect(scoreAction(input)).toMatchObject({ risk_score: 50, decision: "review" });
  });

  it("explains a score-driven verdict by its strongest signal", () => {
    const input = given((i) => {
      i.identity.agent!.trust_score = 50;
      i.facts.amount!.amount = 100_001;
    });
    expect(scoreAction(input).reason).toBe(
      "Denied: risk score 70, mainly because the amount is far above the agent's usual.",
    );
  });
});

describe("confidences", () => {
  it.each<[string, Change, Partial<Record<string, number>>]>([
    ["unknown agent", (i) => (i.identity.agent = null), { agent_identity: 0 }],
    // Decoded JSON proves nothing: a verified card or an explicit id is a claim (0.6 at most).
    [
      "a verified card, a claim",
      (i) => Object.assign(i.identity, { method: "card", proven: false }),
      { agent_identity: 0.6 },
    ],
    [
      "a decoded cnf.jwk key, a claim",
      (i) => Object.assign(i.identity, { method: "key", proven: false }),
      { agent_identity: 0.6 },
    ],
    [
      "an input stored without `proven`, a claim",
      (i) => delete i.identity.proven,
      { agent_identity: 0.6 },
    ],
    [
      "explicit id, card unknown",
      (i) => Object.assign(i.identity, { method: "explicit", card: "unknown", proven: false }),
      { agent_identity: 0.35 },
    ],
    ["no history", (i) => (i.history.approvedCount = 0), { behavioral_risk: 0.5 }],
    [
      "a burst on 3 approvals",
      (i) => Object.assign(i.history, { approvedCount: 3, burst: 5 }),
      { behavioral_risk: 0.4 },
    ],
    ["first payee", (i) => (i.history.payeeSeen = false), { recipient_risk: 0.75 }],
    ["no counterparty history", (i) => (i.history.payeeSeen = null), { recipient_risk: 0.5 }],
    [
      "geo unknown",
      both(withRules({ geo: { allow: ["DE"] } }), (i) => (i.geo = null)),
      { policy_adherence: 0.75 },
    ],
    [
      "payee unverifiable",
      limits([], [{ disclosed: [], undisclosed: 2 }]),
      { mandate_validity: 0.75 },
    ],
  ])("%s", (_, change, expected) => {
    expect(scoreAction(given(change)).confidences).toMatchObject(expected);
  });
});

describe("determinism", () => {
  it("the same input twice gives deep-equal decisions", () => {
    const input = given((i) => {
      i.identity.card = "unknown";
      i.history.payeeSeen = false;
      i.history.burst = 7;
      i.rules = normalizeRules({ max_amount: 5_000, geo: { allow: ["FR"] } });
    });
    const first = scoreAction(input);
    expect(scoreAction(structuredClone(input))).toEqual(first);
    expect(JSON.stringify(scoreAction(input))).toBe(JSON.stringify(first));
  });

  it("does not depend on the order the stages list their signals", () => {
    const a: Signal = { category: "recipient", type: "payee_first_seen", severity: "medium" };
    const b: Signal = { category: "identity", type: "card_unknown", severity: "medium" };
    const one = decide({ kya: part([b]), policy: nothing, risk: part([a, high]) }, clean());
    const two = decide({ kya: part([b]), policy: nothing, risk: part([high, a]) }, clean());
    expect(two).toEqual(one);
  });
});

describe("docs/risk-model.md", () => {
  it("its worked example holds", () => {
    const input = given((i) => {
      i.identity.agent!.trust_score = 75;
      i.facts.amount = { amount: 20_000, currency: "EUR" };
      i.history = {
        ...i.history,
        approvedCount: 12,
        medianApprovedAmount: 5_000,
        payeeSeen: false,
      };
      i.rules = normalizeRules({ max_amount: 100_000, currencies: ["EUR"] });
    });
    expect(scoreAction(input)).toEqual({
      decision: "review",
      risk_level: "elevated",
      risk_score: 50,
      reason: "Review: risk score 50, mainly because the amount is far above the agent's usual.",
      signals: [
        { category: "behavior", type: "amount_above_usual", severity: "high" },
        { category: "recipient", type: "payee_first_seen", severity: "medium" },
      ],
      rejection_reasons: [],
      confidences: {
        agent_identity: 1,
        mandate_validity: 1,
        policy_adherence: 1,
        behavioral_risk: 0.5,
        recipient_risk: 0.75,
      },
    });
  });
});
