import { describe, expect, it } from "vitest";
import type { ModelContext, ModelRow } from "../../src/assess/input";
import { MODEL_SIGNAL_TYPES, runModel } from "../../src/assess/learned-model";
import { SIGNAL_CATALOG } from "../../src/assess/signals";
import type { BoostedTrees } from "../../src/model/boosting";
import { FEATURE_NAMES } from "../../src/model/features";

// The learned model on the assess path (src/assess/learned-model.ts): its probability, score and
// the reasons it names, on hand-built trees whose every row takes the right branch, so that
// each tree credits exactly its split feature with its right leaf's value (path attribution).

const NOW = Date.parse("2026-06-01T12:00:00Z");
const EMPTY: ModelContext = { active: null, shadow: null, agentPast: [], payeePast: [] };
const PAYMENT = { time: NOW, amount: 5000, payee: "sha256:payee" };

/** A model of one always-right tree per (feature, log-odds) pair. */
function modelOf(id: string, credits: [string, number][], base = -4): ModelRow {
  const trees = credits.map(([name, logOdds]) => ({
    feature: [FEATURE_NAMES.indexOf(name as never), -1, -1],
    threshold: [-1e300, 0, 0],
    left: [1, -1, -1],
    right: [2, -1, -1],
    value: [0, 0, logOdds],
  }));
  const params: BoostedTrees = {
    kind: "boosted_trees",
    width: FEATURE_NAMES.length,
    base,
    trees,
    importance: FEATURE_NAMES.map(() => 0),
  };
  return {
    id,
    version: 3,
    label_delay_seconds: 7 * 86_400,
    thresholds: { review: { probability: 0.3 }, deny: { probability: 0.8 } },
    params,
  };
}

describe("the learned model's answer", () => {
  it("is the trees' probability to 4 decimals and the score its thresholds map it to", () => {
    const answer = runModel(modelOf("m-prob", [["amount", 3]]), EMPTY, PAYMENT);
    // 1 / (1 + e^1) = 0.26894…: below the review threshold, 40 × 0.2689 / 0.3 = 35.85.
    expect(answer).toMatchObject({ id: "m-prob", version: 3, probability: 0.2689, score: 35 });
    const high = runModel(modelOf("m-high", [["amount", 8]]), EMPTY, PAYMENT);
    // e^4 / (1 + e^4) = 0.9820: 70 + 30 × (0.982 − 0.8) / 0.2 = 97.3.
    expect(high).toMatchObject({ probability: 0.982, score: 97 });
  });

  it("names each group that raised the log-odds by 0.5 or more, strongest first, at its strength", () => {
    const answer = runModel(
      modelOf("m-groups", [
        ["payee_known_frauds", 1.5],
        ["payee_risk_7d", 1.6], // same group: 3.1, critical
        ["agent_amount_ratio_30d", 2.2], // high
        ["agent_count_1d", 1.2], // medium
        ["night", 0.6], // low
        ["payee_count_7d", 0.4], // under 0.5: not named
        ["payee_new_for_agent", -2], // lowered it: never a reason
      ]),
      EMPTY,
      PAYMENT,
    );
    expect(answer.signals).toEqual([
      { category: "recipient", type: "model_payee_fraud", severity: "critical" },
      { category: "behavior", type: "model_amount_unusual", severity: "high" },
      { category: "behavior", type: "model_agent_velocity", severity: "medium" },
      { category: "behavior", type: "model_time_unusual", severity: "low" },
    ]);
  });

  it("can name every model signal of the catalog, and no other", () => {
    const seen = new Set<string>();
    for (const name of FEATURE_NAMES) {
      const answer = runModel(modelOf(`m-${name}`, [[name, 1]]), EMPTY, PAYMENT);
      for (const s of answer.signals) seen.add(s.type);
    }
    expect([...seen].sort()).toEqual([...MODEL_SIGNAL_TYPES].sort());
    expect(
      Object.keys(SIGNAL_CATALOG)
        .filter((t) => t.startsWith("model_"))
        .sort(),
    ).toEqual([...MODEL_SIGNAL_TYPES].sort());
  });

  it("fails, rather than guessing, when the parameters are neither sent nor held", () => {
    const row = { ...modelOf("m-missing", [["amount", 1]]), params: null };
    expect(() => runModel(row, EMPTY, PAYMENT)).toThrow("risk model m-missing: parameters missing");
  });

  it("holds a model's parameters once sent: the next read may omit them", () => {
    const row = modelOf("m-held", [["amount", 1]]);
    const first = runModel(row, EMPTY, PAYMENT);
    expect(runModel({ ...row, params: null }, EMPTY, PAYMENT)).toEqual(first);
  });

  it("reads the payee's frauds only once known, with the model's label delay", () => {
    const row = modelOf("m-payee", []);
    const trees = row.params as BoostedTrees;
    trees.trees.push({
      feature: [FEATURE_NAMES.indexOf("payee_known_frauds"), -1, -1],
      threshold: [0.5, 0, 0],
      left: [1, -1, -1],
      right: [2, -1, -1],
      value: [0, 0, 6],
    });
    const day = 86_400_000;
    const history = (knownAt: number): ModelContext => ({
      ...EMPTY,
      payeePast: [[NOW - 3 * day, knownAt]],
    });
    expect(runModel(row, history(NOW + 1), PAYMENT).probability).toBe(0.018);
    expect(runModel(row, history(NOW), PAYMENT).probability).toBe(0.8808);
  });
});

describe("the model's reason signals", () => {
  it("are exactly the catalog's model_* signals (the console words them from the catalog)", () => {
    const catalog = Object.keys(SIGNAL_CATALOG).filter((type) => type.startsWith("model_"));
    expect([...MODEL_SIGNAL_TYPES].sort()).toEqual(catalog.sort());
  });
});
