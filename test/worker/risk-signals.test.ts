import { describe, expect, it } from "vitest";
import { CREDENTIAL_FAILURES as VERIFIER_FAILURES } from "../../src/ap2-credentials/failures";
import { scoreBehavior } from "../../src/assess/behavior";
import { MODEL_SIGNAL_TYPES } from "../../src/assess/learned-model";
import { normalizeRules } from "../../src/assess/policy";
import { evaluatePolicy } from "../../src/assess/policy-rules";
import { type MandateFacts, parseAssessRequest } from "../../src/assess/request";
import { COMPONENTS, decide, scoreAction, scoreIdentity } from "../../src/assess/risk";
import type { RiskInput } from "../../src/assess/risk-model";
import { REJECTION_CATALOG, SIGNAL_CATALOG, type Signal } from "../../src/assess/signals";
import openPaymentExample from "../fixtures/ap2/open_payment_mandate.json";
import { AGENT_ID, both, type Change, given, limits, NOW_S, withRules } from "./support/risk";

/** `outcome.network` with some fraud counts (docs/risk-model.md, "Network signals"). */
function network(counts: Partial<NonNullable<RiskInput["network"]>>): Change {
  return (i) => {
    i.network = {
      payee_fraud_orgs: 0,
      payee_legitimate_orgs: 0,
      agent_key_fraud_orgs: 0,
      agent_key_legitimate_orgs: 0,
      issuer_fraud_orgs: 0,
      issuer_legitimate_orgs: 0,
      instrument_fraud_orgs: 0,
      instrument_legitimate_orgs: 0,
      window_days: 30,
      k: 3,
      ...counts,
    };
  };
}

const SIGNALS: [string, Signal["severity"], Change][] = [
  ["agent_unknown", "high", (i) => Object.assign(i.identity, { agent: null, method: null })],
  ["agent_suspended", "high", (i) => (i.identity.agent!.status = "suspended")],
  ["agent_card_invalid", "low", (i) => (i.identity.agent!.card_status = "invalid")],
  ["key_revoked", "high", (i) => (i.identity.key = "revoked")],
  ["key_unregistered", "medium", (i) => (i.identity.key = "unregistered")],
  ["identity_conflict", "high", (i) => (i.identity.conflict = true)],
  ["card_unverified", "medium", (i) => (i.identity.card = "unverified")],
  [
    "http_signature_invalid",
    "medium",
    (i) => (i.httpSignature = { verified: false, failure: "expired", binding: "absent" }),
  ],
  [
    "http_signature_replayed",
    "high",
    (i) => (i.httpSignature = { verified: false, failure: "nonce_replayed", binding: "absent" }),
  ],
  [
    "http_signature_agent_mismatch",
    "high",
    (i) => (i.httpSignature = { verified: true, failure: null, binding: "mismatch" }),
  ],
  ["card_unknown", "medium", (i) => (i.identity.card = "unknown")],
  // ACP checkout telemetry (docs/rails.md): a device or a network new for a known agent.
  ["device_first_seen", "low", (i) => (i.telemetry = { deviceSeen: false, networkSeen: true })],
  ["network_first_seen", "low", (i) => (i.telemetry = { deviceSeen: true, networkSeen: false })],
  [
    "payee_unverifiable",
    "medium",
    limits([], [{ disclosed: [{ id: "other", name: "O", website: null }], undisclosed: 1 }]),
  ],
  ["execution_date_far_future", "medium", (i) => (i.facts.executionDate = "2027-04-29")],
  ["execution_date_unreadable", "medium", (i) => (i.facts.executionDate = "next Tuesday")],
  ["mandate_issued_in_future", "medium", (i) => (i.facts.issuedAt = NOW_S + 61)],
  ["unverified", "low", (i) => delete i.credential],
  [
    "credential_suspended",
    "high",
    (i) => (i.credential!.status = { state: "suspended", required: false, detail: "x" }),
  ],
  [
    "credential_status_unknown",
    "high",
    (i) => (i.credential!.status = { state: "unknown", required: true, detail: "x" }),
  ],
  [
    "credential_status_unknown",
    "low",
    (i) => (i.credential!.status = { state: "unknown", required: false, detail: "x" }),
  ],
  ["geo_unknown", "medium", both(withRules({ geo: { allow: ["DE"] } }), (i) => (i.geo = null))],
  ["velocity_unknown", "medium", withRules({ velocity: { window: "1h", max: 5 } })],
  ["amount_unknown", "medium", both(withRules({ max_amount: 1 }), (i) => (i.facts.amount = null))],
  ["amount_above_usual", "high", (i) => (i.facts.amount!.amount = 30_001)],
  ["amount_above_usual", "critical", (i) => (i.facts.amount!.amount = 100_001)],
  ["activity_burst", "medium", (i) => (i.history.burst = 5)],
  ["activity_burst", "high", (i) => (i.history.burst = 10)],
  ["custom_action", "low", (i) => (i.kind = "custom")],
  ["payee_first_seen", "medium", (i) => (i.history.payeeSeen = false)],
  [
    "recipient_first_contact",
    "medium",
    (i) => {
      i.kind = "message_send";
      i.facts.recipient = "a@b.c";
      i.history.recipientSeen = false;
    },
  ],
  ["network_payee_fraud", "medium", network({ payee_fraud_orgs: 1 })],
  ["network_payee_fraud", "high", network({ payee_fraud_orgs: 2, payee_legitimate_orgs: 5 })],
  ["network_payee_fraud", "critical", network({ payee_fraud_orgs: 4 })],
  ["network_agent_key_fraud", "high", network({ agent_key_fraud_orgs: 3 })],
  ["network_issuer_fraud", "low", network({ issuer_fraud_orgs: 3 })],
  ["network_issuer_fraud", "medium", network({ issuer_fraud_orgs: 4 })],
  ["network_instrument_fraud", "critical", network({ instrument_fraud_orgs: 9 })],
  ["recipient_missing", "medium", (i) => (i.kind = "message_send")],
  ["recipient_missing", "medium", (i) => (i.kind = "voice_call")],
  [
    "recipient_not_e164",
    "medium",
    (i) => {
      i.kind = "voice_call";
      i.facts.recipient = "555-0100";
    },
  ],
];

describe("signals", () => {
  it.each(SIGNALS)("%s (%s)", (type, severity, change) => {
    const { signals } = scoreAction(given(change));
    const category = SIGNAL_CATALOG[type as keyof typeof SIGNAL_CATALOG].category;
    expect(signals).toEqual([{ category, type, severity }]);
  });

  it("covers every signal of the catalog", () => {
    const tested = new Set([
      ...SIGNALS.map(([type]) => type),
      ...COMPONENTS.map((c) => `${c}_fault`),
      // The learned model's reasons: test/node/learned-model.test.ts.
      ...MODEL_SIGNAL_TYPES,
    ]);
    expect([...tested].sort()).toEqual(Object.keys(SIGNAL_CATALOG).sort());
  });

  it.each([
    ["3× the median exactly", 30_000, 10],
    ["fewer than 3 approvals", 100_001, 2],
  ])("amount_above_usual stays quiet at %s", (_, amount, approvedCount) => {
    const input = given((i) => {
      i.facts.amount!.amount = amount;
      i.history.approvedCount = approvedCount;
    });
    expect(scoreBehavior(input).signals).toEqual([]);
  });

  it("geo_unknown also for Cloudflare's XX", () => {
    const input = given(both(withRules({ geo: { allow: ["DE"] } }), (i) => (i.geo = "XX")));
    expect(evaluatePolicy(input).signals).toEqual([
      { category: "policy", type: "geo_unknown", severity: "medium" },
    ]);
  });

  it("are sorted by severity, then category, then type", () => {
    const input = given((i) => {
      i.identity.card = "unknown";
      i.identity.key = "revoked";
      i.history.payeeSeen = false;
      i.identity.agent!.card_status = "invalid";
    });
    expect(scoreAction(input).signals.map((s) => `${s.severity} ${s.type}`)).toEqual([
      "high key_revoked",
      "medium card_unknown",
      "medium payee_first_seen",
      "low agent_card_invalid",
    ]);
  });
});

// The verifier's failures and the ledger object's two (docs/assess.md).
const CREDENTIAL_FAILURES = [...VERIFIER_FAILURES, "already_consumed", "budget_exceeded"];
const EXPIRED_AT = new Date((NOW_S - 1) * 1000).toISOString();
const REJECTIONS: [string, string, Change][] = [
  ["agent_revoked", `agent ${AGENT_ID} is revoked`, (i) => (i.identity.agent!.status = "revoked")],
  [
    "mandate_expired",
    `the mandate expired at ${EXPIRED_AT} (exp ${NOW_S - 1})`,
    (i) => (i.facts.expiresAt = NOW_S - 1),
  ],
  [
    "mandate_amount_exceeded",
    "amount 25000 USD exceeds the mandate's maximum 20000 USD",
    both(limits([{ type: "payment.amount_range", currency: "USD", max: 20_000 }]), (i) => {
      i.facts.amount = { amount: 25_000, currency: "USD" };
    }),
  ],
  [
    "mandate_amount_below_minimum",
    "amount 10000 EUR is below the mandate's minimum 20000 EUR",
    limits([{ type: "payment.amount_range", currency: "EUR", max: 90_000, min: 20_000 }]),
  ],
  [
    "mandate_currency_mismatch",
    "currency EUR is outside the mandate's amount range, set in USD",
    limits([{ type: "payment.amount_range", currency: "USD", max: 20_000 }]),
  ],
  [
    "mandate_outside_execution_window",
    "execution at 2026-04-28T12:00:00.000Z is outside the mandate's not_after 2026-04-27",
    limits([{ type: "payment.execution_date", not_after: "2026-04-27" }]),
  ],
  [
    "payee_not_allowed",
    'payee "merchant-1" is not among the mandate\'s 1 allowed payees',
    limits([], [{ disclosed: [{ id: "other", name: "O", website: null }], undisclosed: 0 }]),
  ],
  [
    "max_amount_exceeded",
    "amount 150000 EUR exceeds the policy maximum 100000",
    both(withRules({ max_amount: 100_000 }), (i) => (i.facts.amount!.amount = 150_000)),
  ],
  [
    "currency_not_allowed",
    "currency EUR is not among the policy's currencies USD, GBP",
    withRules({ currencies: ["USD", "GBP"] }),
  ],
  [
    "geo_not_allowed",
    "country FR is not among the policy's allowed countries DE, NL",
    both(withRules({ geo: { allow: ["DE", "NL"] } }), (i) => (i.geo = "FR")),
  ],
  [
    "velocity_exceeded",
    "this is assessment 6 of the agent within 1h; the policy allows 5 per 1h",
    both(withRules({ velocity: { window: "1h", max: 5 } }), (i) => (i.history.windowCount = 5)),
  ],
  ...CREDENTIAL_FAILURES.map((failure): [string, string, Change] => [
    `credential_${failure}`,
    `the credential is refused (${failure}): ${failure.replaceAll("_", " ")}`,
    (i) => {
      i.credential = {
        verified: false,
        failure,
        detail: { message: failure.replaceAll("_", " ") },
      };
    },
  ]),
];

describe("rejection reasons", () => {
  it.each(REJECTIONS)("%s denies, naming the numbers", (key, description, change) => {
    const decision = scoreAction(given(change));
    const category = REJECTION_CATALOG[key as keyof typeof REJECTION_CATALOG];
    expect(decision.rejection_reasons).toEqual([{ key, category, description }]);
    expect(decision).toMatchObject({ decision: "deny", risk_level: "highest" });
    expect(decision.risk_score).toBeGreaterThanOrEqual(70);
    expect(decision.reason).toBe(`Denied: ${description}.`);
  });

  it("covers every rejection key of the catalog", () => {
    expect(REJECTIONS.map(([key]) => key).sort()).toEqual(Object.keys(REJECTION_CATALOG).sort());
  });

  it.each([
    ["expiry is the exp second itself", (i: RiskInput) => (i.facts.expiresAt = NOW_S), 1],
    ["velocity one below the maximum", (i: RiskInput) => (i.history.windowCount = 4), 0],
    ["the maximum amount itself", (i: RiskInput) => (i.facts.amount!.amount = 100_000), 0],
  ])("boundary: %s", (_, change, count) => {
    const rules = withRules({ max_amount: 100_000, velocity: { window: "1h", max: 5 } });
    const input = given(both(rules, (i) => (i.history.windowCount = 0), change));
    expect(evaluatePolicy(input).rejection_reasons).toHaveLength(count);
  });

  it("an amount-less kind ignores the amount and currency rules", () => {
    const input = given((i) => {
      i.kind = "message_send";
      i.facts.recipient = "+14155550100";
      i.rules = normalizeRules({ max_amount: 1, currencies: ["USD"] });
    });
    expect(evaluatePolicy(input)).toMatchObject({ signals: [], rejection_reasons: [] });
  });

  it("an open mandate without an amount is checked by its ceilings", () => {
    const input = given((i) => {
      i.facts.amount = null;
      i.facts.limits = {
        maxAmounts: [{ amount: 20_000, currency: "USD" }],
        allowedPayees: [],
        constraints: [],
      };
      i.rules = normalizeRules({ max_amount: 10_000 });
    });
    expect(evaluatePolicy(input).rejection_reasons[0]?.description).toBe(
      "the mandate's maximum 20000 USD exceeds the policy maximum 10000",
    );
  });

  it("reads the bounds of the AP2 open payment example", () => {
    const facts: MandateFacts = parseAssessRequest(
      { mandate: { ...openPaymentExample, payment_amount: { amount: 25_000, currency: "USD" } } },
      null,
    ).facts;
    const input = given((i) => {
      i.mandateType = "open_payment";
      i.facts = { ...facts, payee: { id: "merchant-1", name: "M", website: null } };
      i.now = facts.issuedAt! * 1000;
    });
    const result = evaluatePolicy(input);
    expect(result.rejection_reasons.map((r) => r.key)).toEqual(["mandate_amount_exceeded"]);
    expect(result.signals.map((s) => s.type)).toEqual(["payee_unverifiable"]);
    expect(result.confidences).toEqual({ policy_adherence: 1, mandate_validity: 0 });
  });

  it("lists identity, then mandate, then policy reasons, and names the count of the rest", () => {
    const input = given((i) => {
      i.rules = normalizeRules({ currencies: ["USD"] });
      i.facts.expiresAt = NOW_S - 1;
    });
    const decision = scoreAction(input);
    expect(decision.rejection_reasons.map((r) => r.key)).toEqual([
      "mandate_expired",
      "currency_not_allowed",
    ]);
    expect(decision.reason).toBe(
      `Denied: the mandate expired at ${EXPIRED_AT} (exp ${NOW_S - 1}), and 1 more reason.`,
    );
  });
});

describe("what proves the mandate (docs/risk-model.md)", () => {
  it("mandate_validity is 1 for a verified credential, 0.7 for decoded AP2 JSON", () => {
    expect(evaluatePolicy(given(() => {})).confidences.mandate_validity).toBe(1);
    const decoded = evaluatePolicy(given((i) => delete i.credential));
    expect(decoded.confidences.mandate_validity).toBe(0.7);
    expect(decoded.signals).toEqual([{ category: "mandate", type: "unverified", severity: "low" }]);
  });

  it("other kinds are unchanged: no unverified signal, mandate_validity 1", () => {
    const input = given((i) => {
      delete i.credential;
      i.kind = "message_send";
      i.facts.recipient = "+14155550100";
    });
    expect(evaluatePolicy(input)).toMatchObject({ signals: [], rejection_reasons: [] });
    expect(evaluatePolicy(input).confidences.mandate_validity).toBe(1);
  });

  it("a credential that names its agent without proving it earns an explicit id's assurance", () => {
    const claimed = scoreAction(given((i) => (i.identity.proven = false)));
    expect(claimed.confidences.agent_identity).toBe(0.6);
    // and no trust: the 20 points of an agent of trust 0, against 0 for trust 100
    const proven = scoreAction(given(() => {}));
    expect(claimed.risk_score - proven.risk_score).toBe(20);
  });
});

describe('network signals (docs/risk-model.md, "Network signals")', () => {
  it("word the reason with the count of other organizations", () => {
    const decided = scoreAction(given(network({ payee_fraud_orgs: 4 })));
    expect(decided.reason).toBe(
      `Review: risk score ${decided.risk_score}, mainly because the payee was confirmed in ` +
        "fraud at 4 other organizations this month.",
    );
    const one = scoreAction(given(network({ agent_key_fraud_orgs: 1 })));
    expect(one.signals).toEqual([
      { category: "network", type: "network_agent_key_fraud", severity: "medium" },
    ]);
  });

  it("weigh on a learned model's score only when the model did not learn from the network", () => {
    const input = given(network({ payee_fraud_orgs: 2 }));
    const parts = {
      kya: scoreIdentity(input),
      policy: evaluatePolicy(input),
      risk: { signals: [], rejection_reasons: [], confidences: {} },
    };
    expect(decide(parts, input, { score: 10 }).risk_score).toBe(40);
    expect(decide(parts, input, { score: 10, readsNetwork: true }).risk_score).toBe(10);
  });

  it("are none without network counts, and none for legitimate ones", () => {
    expect(scoreAction(given(network({ payee_legitimate_orgs: 7 }))).signals).toEqual([]);
    expect(scoreAction(given(() => {})).signals).toEqual([]);
  });
});
