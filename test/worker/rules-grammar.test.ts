import { describe, expect, it } from "vitest";
import { normalizeRules, PolicyRules } from "../../src/assess/policy";
import { scoreAction } from "../../src/assess/risk";
import type { RiskInput } from "../../src/assess/risk-model";
import { compileRules, firstMatch } from "../../src/assess/rules/evaluate";
import type { ConditionNode } from "../../src/assess/rules/grammar";
import { call } from "./support/api";
import { assess, openPayment, orgWithKey } from "./support/assess";
import { errorBody } from "./support/errors";
import { AGENT_ID, clean, given, NOW } from "./support/risk";

// docs/rules.md: grammar 1, its operators and combinators in three-valued logic, first match
// wins, and the actions' effect on the decision. Pure: the model is deterministic.

type Json = Record<string, any>;
type Truth = "true" | "false" | "unknown";

/** How a condition evaluates on an input: a rule matches it, its negation does, or neither. */
function truth(when: ConditionNode, input: RiskInput = clean(), score = 0): Truth {
  const program = compileRules([
    { id: "yes", action: "deny", when },
    { id: "no", action: "deny", when: { not: when } },
  ]);
  const level = score >= 70 ? "highest" : score >= 40 ? "elevated" : "normal";
  const subject = { input, score, level, signals: new Set(["payee_first_seen"]) } as const;
  const match = firstMatch(program, subject);
  return match === null ? "unknown" : match.id === "yes" ? "true" : "false";
}

const c = (attr: string, op: string, value: unknown) => ({ attr, op, value }) as ConditionNode;
const TRUE = c("amount", "eq", 10_000);
const FALSE = c("amount", "eq", 1);
/** Unknown: no agent has a trust score. */
const UNKNOWN = c("agent.trust_score", "gte", 0);
const noAgent = () => given((i) => (i.identity.agent = null));

describe("operators", () => {
  it.each<[string, ConditionNode, Truth]>([
    ["eq number", c("amount", "eq", 10_000), "true"],
    ["eq number, other", c("amount", "eq", 10_001), "false"],
    ["ne number", c("amount", "ne", 10_001), "true"],
    ["eq string", c("currency", "eq", "EUR"), "true"],
    ["ne string", c("currency", "ne", "EUR"), "false"],
    ["eq enum", c("kind", "eq", "ap2_payment"), "true"],
    ["eq boolean", c("payee.first_seen", "eq", false), "true"],
    ["lt below", c("amount", "lt", 10_001), "true"],
    ["lt at the bound", c("amount", "lt", 10_000), "false"],
    ["lte at the bound", c("amount", "lte", 10_000), "true"],
    ["gt at the bound", c("amount", "gt", 10_000), "false"],
    ["gt below", c("amount", "gt", 9_999), "true"],
    ["gte at the bound", c("amount", "gte", 10_000), "true"],
    ["gte above", c("amount", "gte", 10_001), "false"],
    ["between, inclusive low", c("amount", "between", [10_000, 20_000]), "true"],
    ["between, inclusive high", c("amount", "between", [5_000, 10_000]), "true"],
    ["between, outside", c("amount", "between", [10_001, 20_000]), "false"],
    ["in", c("currency", "in", ["USD", "EUR"]), "true"],
    ["in, absent", c("currency", "in", ["USD", "GBP"]), "false"],
    ["not_in", c("geo.country", "not_in", ["FR", "IT"]), "true"],
    ["not_in, present", c("geo.country", "not_in", ["DE"]), "false"],
    ["contains", c("signals", "contains", "payee_first_seen"), "true"],
    ["contains, absent", c("signals", "contains", "activity_burst"), "false"],
    ["contains_any", c("signals", "contains_any", ["activity_burst", "payee_first_seen"]), "true"],
    [
      "contains_any, none",
      c("signals", "contains_any", ["activity_burst", "geo_unknown"]),
      "false",
    ],
    ["contains_all", c("signals", "contains_all", ["payee_first_seen"]), "true"],
    [
      "contains_all, one missing",
      c("signals", "contains_all", ["payee_first_seen", "activity_burst"]),
      "false",
    ],
    ["exists true", c("payee.id", "exists", true), "true"],
    ["exists false", c("payee.id", "exists", false), "false"],
    ["ordered enum gte (low is not >= medium)", c("agent.risk_tier", "gte", "medium"), "false"],
    ["ordered enum lt", c("agent.risk_tier", "lt", "medium"), "true"],
  ])("%s", (_, when, expected) => {
    expect(truth(when)).toBe(expected);
  });

  it("a comparison with a missing value is unknown, and so is its negation", () => {
    const input = given((i) => (i.facts.amount = null));
    for (const op of ["eq", "ne", "lt", "gt", "gte", "lte"]) {
      expect(truth(c("amount", op, 1), input)).toBe("unknown");
    }
    expect(truth(c("amount", "between", [0, 1]), input)).toBe("unknown");
    expect(truth(c("currency", "not_in", ["EUR"]), input)).toBe("unknown");
    // `exists` is never unknown: it is how a rule asks about a missing value.
    expect(truth(c("amount", "exists", false), input)).toBe("true");
    expect(truth(c("amount", "exists", true), input)).toBe("false");
  });
});

describe("combinators (Kleene logic)", () => {
  it.each<[string, ConditionNode, Truth]>([
    ["all true", { all: [TRUE, TRUE] }, "true"],
    ["all with a false", { all: [TRUE, FALSE] }, "false"],
    ["all: false beats unknown", { all: [UNKNOWN, FALSE] }, "false"],
    ["all: unknown without a false", { all: [TRUE, UNKNOWN] }, "unknown"],
    ["any with a true", { any: [FALSE, TRUE] }, "true"],
    ["any: true beats unknown", { any: [UNKNOWN, TRUE] }, "true"],
    ["any: unknown without a true", { any: [FALSE, UNKNOWN] }, "unknown"],
    ["any false", { any: [FALSE, FALSE] }, "false"],
    ["not true", { not: TRUE }, "false"],
    ["not false", { not: FALSE }, "true"],
    ["not unknown", { not: UNKNOWN }, "unknown"],
    ["nested", { all: [{ any: [FALSE, TRUE] }, { not: { all: [TRUE, FALSE] } }] }, "true"],
  ])("%s", (_, when, expected) => {
    expect(truth(when, noAgent())).toBe(expected);
  });
});

describe("attributes", () => {
  it.each<[string, ConditionNode, Truth]>([
    ["payee.id", c("payee.id", "eq", "merchant-1"), "true"],
    ["payee.name", c("payee.name", "eq", "Merchant One"), "true"],
    ["mandate_type", c("mandate_type", "eq", "payment"), "true"],
    ["mandate.verified (a verified credential)", c("mandate.verified", "eq", true), "true"],
    ["agent.identified", c("agent.identified", "eq", true), "true"],
    ["agent.id", c("agent.id", "eq", AGENT_ID), "true"],
    ["agent.status", c("agent.status", "eq", "active"), "true"],
    ["agent.proven", c("agent.proven", "eq", true), "true"],
    ["agent.trust_score", c("agent.trust_score", "gte", 100), "true"],
    ["agent.risk_tier", c("agent.risk_tier", "eq", "low"), "true"],
    ["agent.card_status", c("agent.card_status", "eq", "verified"), "true"],
    ["agent.identified_by", c("agent.identified_by", "eq", "key"), "true"],
    ["key.status", c("key.status", "eq", "active"), "true"],
    [
      "card.verification is unknown without a card ref",
      c("card.verification", "eq", "verified"),
      "unknown",
    ],
    ["identity.conflict", c("identity.conflict", "eq", false), "true"],
    // NOW is 2026-04-28T12:00:00Z, a Tuesday.
    ["time.hour (UTC)", c("time.hour", "eq", 12), "true"],
    ["time.weekday (ISO, UTC)", c("time.weekday", "eq", 2), "true"],
    ["geo.country", c("geo.country", "eq", "DE"), "true"],
    ["recipient is unknown for a payment", c("recipient", "exists", true), "false"],
  ])("%s", (_, when, expected) => {
    expect(truth(when)).toBe(expected);
  });

  it("mandate.verified is false for decoded JSON and refused chains, unknown for other kinds", () => {
    const decoded = given((i) => delete i.credential);
    expect(truth(c("mandate.verified", "eq", false), decoded)).toBe("true");
    const refused = given((i) => {
      i.credential = { verified: false, failure: "expired", detail: null };
    });
    expect(truth(c("mandate.verified", "eq", false), refused)).toBe("true");
    const message = given((i) => (i.kind = "message_send"));
    expect(truth(c("mandate.verified", "eq", true), message)).toBe("unknown");
  });

  it("a claimed agent's trust is not borrowed: trust 0, tier critical, not proven", () => {
    const claimed = given((i) => (i.identity.proven = false));
    expect(truth(c("agent.proven", "eq", false), claimed)).toBe("true");
    expect(truth(c("agent.trust_score", "eq", 0), claimed)).toBe("true");
    expect(truth(c("agent.risk_tier", "eq", "critical"), claimed)).toBe("true");
    // An approve rule on trust cannot be met by naming a trusted agent.
    expect(truth(c("agent.trust_score", "gte", 80), claimed)).toBe("false");
    const stored = given((i) => delete i.identity.proven);
    expect(truth(c("agent.trust_score", "eq", 0), stored)).toBe("true");
    expect(truth(c("agent.proven", "eq", false), noAgent())).toBe("true");
    expect(truth(c("agent.trust_score", "exists", true), noAgent())).toBe("false");
  });

  it("risk.score and risk.level read the model's score before rules", () => {
    expect(truth(c("risk.score", "eq", 45), clean(), 45)).toBe("true");
    expect(truth(c("risk.level", "eq", "elevated"), clean(), 45)).toBe("true");
    expect(truth(c("risk.level", "gte", "elevated"), clean(), 75)).toBe("true");
    expect(truth(c("risk.level", "lt", "elevated"), clean(), 10)).toBe("true");
  });

  it("window aggregates read the counted values, by canonical key", () => {
    const input = given((i) => {
      i.aggregates = {
        "count.agent.3600": 4,
        "sum.payee.86400": 25_000,
        "count.principal.60": null,
      };
    });
    expect(truth(c("count.agent.1h", "gte", 4), input)).toBe("true");
    // The same window written another way is the same aggregate.
    expect(truth(c("count.agent.PT60M", "gt", 4), input)).toBe("false");
    expect(truth(c("sum.payee.P1D", "between", [20_000, 30_000]), input)).toBe("true");
    expect(truth(c("count.principal.1m", "gte", 0), input)).toBe("unknown");
  });

  it("time of day follows the assessment time", () => {
    const night = given((i) => (i.now = Date.UTC(2026, 3, 26, 2, 30)));
    expect(truth(c("time.hour", "between", [0, 5]), night)).toBe("true");
    expect(truth(c("time.weekday", "eq", 7), night)).toBe("true");
  });
});

// --- Rules in the decision ---

function rules(list: Json[], extra: Json = {}) {
  return normalizeRules(PolicyRules.parse({ ...extra, grammar: 1, rules: list }));
}

describe("first match wins", () => {
  const list = [
    { id: "small", action: "approve", when: c("amount", "lt", 100) },
    { id: "medium", action: "deny", when: c("amount", "lt", 1_000) },
    { id: "catch-all", action: "review", when: c("amount", "gte", 0) },
  ];

  it.each([
    [50, "small", "approve"],
    [500, "medium", "deny"],
    [5_000, "catch-all", "review"],
  ])("amount %i: rule %s decides %s", (amount, id, decision) => {
    const input = given((i) => {
      i.facts.amount = { amount, currency: "EUR" };
      i.rules = rules(list);
    });
    const result = scoreAction(input);
    expect(result.rule?.id).toBe(id);
    expect(result.decision).toBe(decision);
  });

  it("a later rule never runs once an earlier one matched, even a deny", () => {
    const input = given((i) => {
      i.rules = rules([
        { id: "first", action: "approve", when: c("currency", "eq", "EUR") },
        { id: "second", action: "deny", when: c("currency", "eq", "EUR") },
      ]);
    });
    expect(scoreAction(input)).toMatchObject({
      decision: "approve",
      rule: { id: "first", index: 0, action: "approve" },
    });
  });

  it("no rule matching leaves the model's decision as it was", () => {
    const plain = scoreAction(clean());
    const input = given((i) => {
      i.rules = rules([{ id: "never", action: "deny", when: c("amount", "gt", 1_000_000) }]);
    });
    const result = scoreAction(input);
    expect(result.rule).toBeUndefined();
    expect(result).toEqual({ ...plain, reason: "Approved: known agent within policy." });
  });
});

describe("actions", () => {
  it("deny: a policy rejection reason naming the rule, adherence 0", () => {
    const input = given((i) => {
      i.rules = rules([
        { id: "no-eur", action: "deny", when: c("currency", "eq", "EUR"), description: "EUR off" },
      ]);
    });
    const result = scoreAction(input);
    expect(result.decision).toBe("deny");
    expect(result.risk_score).toBe(70);
    expect(result.rejection_reasons).toEqual([
      {
        key: "policy_rule_denied",
        category: "policy",
        description: 'policy rule "no-eur" matched (EUR off)',
      },
    ]);
    expect(result.reason).toBe('Denied: policy rule "no-eur" matched (EUR off).');
    expect(result.confidences.policy_adherence).toBe(0);
  });

  it("review: at least review, with the rule as the reason", () => {
    const input = given((i) => {
      i.rules = rules([{ id: "look", action: "review", when: c("geo.country", "eq", "DE") }]);
    });
    const result = scoreAction(input);
    expect([result.decision, result.risk_score, result.risk_level]).toEqual([
      "review",
      40,
      "elevated",
    ]);
    expect(result.reason).toBe('Review: policy rule "look" matched.');
  });

  it("approve: the score's band no longer decides; the score is capped below review", () => {
    // A first-seen payee (15) and an untrusted agent (trust 0: 20) score 35; a burst adds 15.
    const risky = (i: RiskInput) => {
      i.history.payeeSeen = false;
      i.history.burst = 5;
      if (i.identity.agent) i.identity.agent.trust_score = 0;
    };
    expect(scoreAction(given(risky))).toMatchObject({ decision: "review", risk_score: 50 });
    const input = given((i) => {
      risky(i);
      i.rules = rules([{ id: "known-payees", action: "approve", when: c("amount", "lt", 20_000) }]);
    });
    const result = scoreAction(input);
    expect([result.decision, result.risk_score, result.risk_level]).toEqual([
      "approve",
      39,
      "normal",
    ]);
    expect(result.reason).toBe('Approved: policy rule "known-payees" matched.');
    // The signals stay: the rule decides, it does not hide what the model saw.
    expect(result.signals.map((s) => s.type)).toEqual(["activity_burst", "payee_first_seen"]);
  });

  it("approve never overrides a hard limit, a revoked agent or a fault", () => {
    const approveAll = [
      { id: "all", action: "approve", when: c("agent.identified", "exists", true) },
    ];
    const limit = scoreAction(given((i) => (i.rules = rules(approveAll, { max_amount: 100 }))));
    expect(limit.decision).toBe("deny");
    expect(limit.rejection_reasons.map((r) => r.key)).toEqual(["max_amount_exceeded"]);
    const revoked = given((i) => {
      if (i.identity.agent) i.identity.agent.status = "revoked";
      i.rules = rules(approveAll);
    });
    expect(scoreAction(revoked).decision).toBe("deny");
    const unchecked = given((i) => {
      i.geo = null;
      i.rules = rules(approveAll, { geo: { allow: ["DE"] } });
    });
    expect(scoreAction(unchecked).decision).toBe("review");
  });

  it("the create-shape limits and the rule list both apply", () => {
    const input = given((i) => {
      i.rules = rules([{ id: "look", action: "review", when: c("amount", "gt", 0) }], {
        currencies: ["USD"],
      });
    });
    const result = scoreAction(input);
    expect(result.decision).toBe("deny");
    expect(result.rejection_reasons.map((r) => r.key)).toEqual(["currency_not_allowed"]);
    expect(result.rule?.id).toBe("look");
  });

  it("is deterministic: the same input, the same decision, byte for byte", () => {
    const input = given((i) => {
      i.rules = rules([{ id: "hour", action: "review", when: c("time.hour", "gte", 12) }]);
    });
    expect(JSON.stringify(scoreAction(input))).toBe(JSON.stringify(scoreAction(input)));
    expect(new Date(NOW).getUTCHours()).toBe(12);
  });
});

// --- Validation: a rule that cannot be evaluated is refused, with its path ---

function issues(value: unknown): string[] {
  const result = PolicyRules.safeParse(value);
  if (result.success) throw new Error("expected the rules to be refused");
  return result.error.issues.flatMap((issue) =>
    issue.code === "unrecognized_keys"
      ? issue.keys.map((key) => `${[...issue.path, key].join(".")}: unknown field`)
      : [`${issue.path.join(".")}: ${issue.message}`],
  );
}

const rule = (when: unknown, extra: Json = {}) => ({
  grammar: 1,
  rules: [{ id: "r", action: "deny", when, ...extra }],
});

describe("validation", () => {
  it("accepts the spec's create shape unchanged, alone and beside a rule list", () => {
    const shape = {
      max_amount: 100_000,
      currencies: ["EUR", "USD"],
      geo: { allow: ["DE", "FR"] },
      velocity: { window: "1h", max: 10 },
    };
    expect(PolicyRules.parse(shape)).toEqual(shape);
    const both = { ...shape, ...rule(c("amount", "gt", 1)) };
    expect(PolicyRules.parse(both)).toEqual(both);
  });

  it.each<[string, unknown, string[]]>([
    [
      "rules without a grammar",
      { rules: rule(TRUE).rules },
      ["grammar: required with rules (the current grammar is 1)"],
    ],
    ["an unknown grammar", { ...rule(TRUE), grammar: 2 }, ["grammar: Invalid input: expected 1"]],
    [
      "an unknown attribute",
      rule(c("amout", "gt", 1)),
      [
        "rules.0.when.attr: unknown attribute (the attributes of grammar 1: /docs#description/rule-attributes)",
      ],
    ],
    [
      "an unknown operator",
      rule(c("amount", "like", 1)),
      [
        'rules.0.when.op: Invalid option: expected one of "eq"|"ne"|"lt"|"lte"|"gt"|"gte"|"between"|"in"|"not_in"|"contains"|"contains_any"|"contains_all"|"exists"',
      ],
    ],
    [
      "an ordering operator on a string",
      rule(c("currency", "gt", "EUR")),
      ["rules.0.when.op: gt does not apply to a string attribute"],
    ],
    [
      "contains on a scalar",
      rule(c("amount", "contains", 1)),
      ["rules.0.when.op: contains does not apply to a number attribute"],
    ],
    [
      "eq on a set",
      rule(c("signals", "eq", "x")),
      ["rules.0.when.op: eq does not apply to a set attribute"],
    ],
    [
      "a string for a number",
      rule(c("amount", "gt", "100")),
      ["rules.0.when.value: must be a number"],
    ],
    [
      "a number out of range",
      rule(c("agent.trust_score", "gt", 101)),
      ["rules.0.when.value: must be between 0 and 100"],
    ],
    [
      "a lowercase currency",
      rule(c("currency", "eq", "eur")),
      ["rules.0.when.value: must be an ISO 4217 code of 3 uppercase letters"],
    ],
    [
      "an unknown enum value",
      rule(c("risk.level", "eq", "high")),
      ["rules.0.when.value: must be one of normal, elevated, highest"],
    ],
    [
      "an unknown signal",
      rule(c("signals", "contains", "paye_first_seen")),
      [
        `rules.0.when.value: must be one of ${[
          "agent_unknown",
          "agent_suspended",
          "key_revoked",
          "key_unregistered",
          "identity_conflict",
          "card_unverified",
          "card_unknown",
          "agent_card_invalid",
          "payee_unverifiable",
          "execution_date_far_future",
          "execution_date_unreadable",
          "mandate_issued_in_future",
          "credential_suspended",
          "credential_status_unknown",
          "unverified",
          "geo_unknown",
          "velocity_unknown",
          "amount_unknown",
          "amount_above_usual",
          "activity_burst",
          "custom_action",
          "payee_first_seen",
          "recipient_first_contact",
          "device_first_seen",
          "network_first_seen",
          "recipient_missing",
          "recipient_not_e164",
          "model_amount_unusual",
          "model_agent_velocity",
          "model_time_unusual",
          "model_payee_new",
          "model_payee_activity",
          "model_payee_fraud",
          "model_network_fraud",
          "network_payee_fraud",
          "network_agent_key_fraud",
          "network_issuer_fraud",
          "network_instrument_fraud",
          "http_signature_invalid",
          "http_signature_replayed",
          "http_signature_agent_mismatch",
          "kya_fault",
          "policy_fault",
          "risk_fault",
        ].join(", ")}`,
      ],
    ],
    [
      "a list for eq",
      rule(c("amount", "eq", [1, 2])),
      ["rules.0.when.value: must be a single value for eq"],
    ],
    ["a scalar for in", rule(c("amount", "in", 1)), ["rules.0.when.value: must be a list"]],
    [
      "a bad list element",
      rule(c("currency", "in", ["EUR", 3])),
      ["rules.0.when.value.1: must be a string"],
    ],
    [
      "between with one bound",
      rule(c("amount", "between", [1])),
      ["rules.0.when.value: must be [low, high]"],
    ],
    [
      "between reversed",
      rule(c("amount", "between", [5, 1])),
      ["rules.0.when.value: low must not be above high"],
    ],
    [
      "exists with a number",
      rule(c("amount", "exists", 1)),
      ["rules.0.when.value: must be true or false"],
    ],
    [
      "a comparison without value",
      rule({ attr: "amount", op: "gt" }),
      ["rules.0.when.value: required"],
    ],
    ["a comparison without op", rule({ attr: "amount", value: 1 }), ["rules.0.when.op: required"]],
    [
      "a window beyond 90 days",
      rule(c("count.agent.91d", "gt", 1)),
      ["rules.0.when.attr: the window must be a duration from 1s to 90d, such as 15m, 1h, P7D"],
    ],
    [
      "an unknown aggregate subject",
      rule(c("count.card.1h", "gt", 1)),
      [
        "rules.0.when.attr: unknown attribute (the attributes of grammar 1: /docs#description/rule-attributes)",
      ],
    ],
    [
      "two forms in one node",
      rule({ all: [TRUE], any: [TRUE] }),
      [
        "rules.0.when: must be exactly one of {all}, {any}, {not} or a comparison {attr, op, value}",
      ],
    ],
    [
      "an empty node",
      rule({}),
      [
        "rules.0.when: must be exactly one of {all}, {any}, {not} or a comparison {attr, op, value}",
      ],
    ],
    [
      "an empty all",
      rule({ all: [] }),
      ["rules.0.when.all: Too small: expected array to have >=1 items"],
    ],
    [
      "a fault deep inside",
      rule({ all: [TRUE, { any: [FALSE, { not: c("amount", "gt", "x") }] }] }),
      ["rules.0.when.all.1.any.1.not.value: must be a number"],
    ],
    [
      "an unknown field in a condition",
      rule({ ...TRUE, unit: "EUR" }),
      ["rules.0.when.unit: unknown field"],
    ],
    [
      "an unknown action",
      { grammar: 1, rules: [{ id: "r", action: "block", when: TRUE }] },
      ['rules.0.action: Invalid option: expected one of "approve"|"review"|"deny"'],
    ],
    [
      "a bad rule id",
      { grammar: 1, rules: [{ id: "Big Rule", action: "deny", when: TRUE }] },
      ["rules.0.id: must be 1-64 of a-z, 0-9, _ . - (a slug)"],
    ],
    [
      "a repeated rule id",
      {
        grammar: 1,
        rules: [
          { id: "r", action: "deny", when: TRUE },
          { id: "r", action: "review", when: TRUE },
        ],
      },
      ["rules.1.id: repeats r"],
    ],
    [
      "an empty rule list",
      { grammar: 1, rules: [] },
      ["rules: Too small: expected array to have >=1 items"],
    ],
  ])("refuses %s", (_, value, expected) => {
    expect(issues(value)).toEqual(expected);
  });

  it("refuses nesting deeper than 8", () => {
    let when: ConditionNode = TRUE;
    for (let i = 0; i < 8; i++) when = { not: when };
    expect(issues(rule(when))).toEqual([
      "rules.0.when.not.not.not.not.not.not.not.not: nests deeper than 8",
    ]);
  });
});

// --- Through HTTP: what POST /v1/policies answers for a rule list it refuses ---

/** `{"not": …}` nested `levels` deep around a comparison, as JSON text (no recursion). */
function deepNot(levels: number): string {
  return `${'{"not":'.repeat(levels)}{"attr":"amount","op":"gt","value":1}${"}".repeat(levels)}`;
}

function policyBody(rulesJson: string): string {
  return `{"name":"deep","activate":false,"rules":{"grammar":1,"rules":[{"id":"r","action":"deny","when":${rulesJson}}]}}`;
}

async function postPolicy(body: unknown) {
  const { org } = await orgWithKey();
  return call("/v1/policies", { method: "POST", token: org.token, raw: true, body });
}

async function refused(rules: unknown): Promise<{ path: string; message: string }[]> {
  const res = await postPolicy({ name: "bad", rules, activate: false });
  expect(res.status, res.text).toBe(400);
  expect(res.error.error).toBe("invalid_request");
  return res.error.details.map((d: Json) => ({ path: d.path, message: d.message }));
}

const NINTH = `rules.rules.0.when${".not".repeat(8)}`;

describe("POST /v1/policies refuses what it cannot evaluate cheaply (400 with the path)", () => {
  it.each([2_000, 30_000])("a condition nested %i levels deep", async (levels) => {
    // 30,000 levels (240 KB) is about the deepest the 256 KiB body limit admits.
    const res = await postPolicy(policyBody(deepNot(levels)));
    expect(res.status, res.text.slice(0, 200)).toBe(400);
    expect(res.json).toEqual(
      errorBody("invalid_request", [
        { path: NINTH, message: "nests deeper than 8", code: "custom" },
      ]),
    );
  });

  it("50,000 levels: arrays in a condition are a 400, `not` beyond the body limit a 413", async () => {
    const arrays = `{"all":${"[".repeat(50_000)}${"]".repeat(50_000)}}`;
    const res = await postPolicy(policyBody(arrays));
    expect(res.status, res.text.slice(0, 200)).toBe(400);
    expect(res.error.details[0].path).toBe("rules.rules.0.when.all.0");
    const nots = await postPolicy(policyBody(deepNot(50_000)));
    // 400 KB: the body limit (256 KiB) answers before the schema, with its own 413.
    expect(nots.status).toBe(413);
    expect(nots.error).toEqual(errorBody("request_too_large", { max_bytes: 262_144 }));
  });

  it("50,000 levels of `not` are refused without recursion (the schema itself)", () => {
    const result = PolicyRules.safeParse(JSON.parse(policyBody(deepNot(50_000))).rules);
    expect(result.success).toBe(false);
    expect(result.error?.issues.map((i) => `${i.path.join(".")}: ${i.message}`)).toEqual([
      `${NINTH.slice("rules.".length)}: nests deeper than 8`,
    ]);
  });

  it("more than 1,000 conditions in one rule", async () => {
    const leaves = Array.from({ length: 21 }, () => c("amount", "gt", 1));
    const when = { all: Array.from({ length: 50 }, () => ({ all: leaves })) };
    expect(await refused({ grammar: 1, rules: [{ id: "r", action: "deny", when }] })).toEqual([
      { path: "rules.rules.0.when", message: "more than 1000 conditions" },
    ]);
  });

  it("more than 8 distinct window aggregates, naming the ninth; a respelling is not another", async () => {
    const windows = ["1m", "2m", "3m", "4m", "5m", "6m", "7m", "8m"];
    const eight = windows.map((w) => c(`count.agent.${w}`, "gt", 1));
    const ok = await postPolicy({
      name: "eight",
      activate: false,
      rules: {
        grammar: 1,
        rules: [
          { id: "a", action: "review", when: { any: eight } },
          // PT1M is 1m: the same aggregate.
          { id: "b", action: "deny", when: c("count.agent.PT1M", "gt", 5) },
        ],
      },
    });
    expect(ok.status, ok.text).toBe(201);
    expect(
      await refused({
        grammar: 1,
        rules: [
          { id: "a", action: "review", when: { any: eight } },
          { id: "b", action: "deny", when: { not: c("sum.payee.9m", "gt", 5) } },
        ],
      }),
    ).toEqual([
      {
        path: "rules.rules.1.when.not.attr",
        message: "a policy reads at most 8 distinct window aggregates",
      },
    ]);
  });

  it.each<[string, unknown, string, string]>([
    [
      "a NUL in a description",
      { id: "r", action: "deny", when: TRUE, description: "a\u0000b" },
      "rules.rules.0.description",
      "must not contain control characters",
    ],
    [
      "a newline in a description (it would flow into the reason)",
      { id: "r", action: "deny", when: TRUE, description: "line\nbreak" },
      "rules.rules.0.description",
      "must not contain control characters",
    ],
    [
      "a lone surrogate in a description",
      { id: "r", action: "deny", when: TRUE, description: "x\uD800" },
      "rules.rules.0.description",
      "must be valid Unicode (no unpaired surrogate)",
    ],
    [
      "a NUL in a string value",
      { id: "r", action: "deny", when: c("payee.id", "eq", "m\u0000") },
      "rules.rules.0.when.value",
      "must not contain NUL (U+0000)",
    ],
    [
      "a lone surrogate in a list of values",
      { id: "r", action: "deny", when: c("payee.name", "in", ["ok", "\uDC00x"]) },
      "rules.rules.0.when.value.1",
      "must be valid Unicode (no unpaired surrogate)",
    ],
    [
      "an hour that is not an integer",
      { id: "r", action: "deny", when: c("time.hour", "gte", 5.5) },
      "rules.rules.0.when.value",
      "must be an integer",
    ],
    [
      "a weekday that is not an integer",
      { id: "r", action: "deny", when: c("time.weekday", "between", [1, 5.5]) },
      "rules.rules.0.when.value.1",
      "must be an integer",
    ],
    [
      "a count that is not an integer",
      { id: "r", action: "deny", when: c("count.payee.1h", "gt", 2.5) },
      "rules.rules.0.when.value",
      "must be an integer",
    ],
    [
      "an uppercase agent id",
      { id: "r", action: "deny", when: c("agent.id", "eq", AGENT_ID.toUpperCase()) },
      "rules.rules.0.when.value",
      "must be a lowercase UUID",
    ],
    [
      "an agent id that is no UUID",
      { id: "r", action: "deny", when: c("agent.id", "in", [AGENT_ID, "agent-7"]) },
      "rules.rules.0.when.value.1",
      "must be a lowercase UUID",
    ],
  ])("%s", async (_, rule, path, message) => {
    // JSON.stringify escapes NUL and lone surrogates: the server parses them back.
    const res = await postPolicy({
      name: "bad",
      activate: false,
      rules: { grammar: 1, rules: [rule] },
    });
    expect(res.status, res.text).toBe(400);
    expect(res.error.details).toEqual([{ path, message, code: "custom" }]);
  });

  it("accepts integers, a sum with a fraction, a lowercase agent id; trims a description", async () => {
    const res = await postPolicy({
      name: "fine",
      activate: false,
      rules: {
        grammar: 1,
        rules: [
          { id: "a", action: "deny", when: c("agent.id", "eq", AGENT_ID), description: " x " },
          { id: "b", action: "review", when: c("time.hour", "between", [0, 5]) },
          { id: "c", action: "review", when: c("sum.agent.1d", "gt", 0.5) },
        ],
      },
    });
    expect(res.status, res.text).toBe(201);
    expect(res.json.rules.rules![0]!.description).toBe("x");
  });
});

describe("recorded inputs", () => {
  it("an open mandate whose constraint nests 30 levels deep (the mandate's limit is 32) is assessed", async () => {
    const { key } = await orgWithKey();
    const mandate = openPayment();
    // mandate.constraints.0.note is at depth 3; the string at the bottom at depth 30.
    let note: unknown = "bottom";
    for (let depth = 30; depth > 3; depth--) note = { deeper: note };
    mandate.constraints[0].note = note;
    const res = await assess(key, { mandate });
    expect(res.status, res.text).toBe(200);
    // One level deeper is the mandate's own limit, as before.
    let deeper: unknown = "bottom";
    for (let depth = 33; depth > 3; depth--) deeper = { deeper };
    mandate.constraints[0].note = deeper;
    const refusedDeeper = await assess(key, { mandate });
    expect(refusedDeeper.status).toBe(400);
    expect(refusedDeeper.error.details[0].path).toMatch(/^mandate\.constraints\.0\.note/);
  });
});
