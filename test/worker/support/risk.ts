import type { OpenMandateLimits } from "../../../src/assess/facts";
import { normalizeRules, type PolicyRules } from "../../../src/assess/policy";
import type { ComponentResult, RiskInput } from "../../../src/assess/risk-model";
import type { Signal } from "../../../src/assess/signals";

/** Fixtures of the risk model's tests: one clean input, and small changes to it. */

export const NOW = Date.UTC(2026, 3, 28, 12, 0, 0);
export const NOW_S = NOW / 1000;
export const AGENT_ID = "0190f5a2-7c1e-7000-8000-000000000001";

/** A known, trusted agent paying a payee it paid before, within an empty policy: no signal. */
export function clean(): RiskInput {
  return {
    kind: "ap2_payment",
    mandateType: "payment",
    facts: {
      amount: { amount: 10_000, currency: "EUR" },
      payee: { id: "merchant-1", name: "Merchant One", website: null },
      recipient: null,
      channel: null,
      transactionId: "tx",
      executionDate: null,
      instrumentType: "card",
      riskData: null,
      holderKey: null,
      limits: null,
      issuedAt: null,
      expiresAt: null,
    },
    identity: {
      agent: {
        id: AGENT_ID,
        status: "active",
        trust_score: 100,
        risk_tier: "low",
        card_status: "verified",
      },
      method: "key",
      key: "active",
      card: null,
      conflict: false,
      proven: true,
    },
    // The baseline is an AP2 mandate from a verified credential, its holder key proven.
    credential: { verified: true, failure: null, detail: null },
    rules: normalizeRules({}),
    policyVersion: 1,
    history: {
      windowCount: null,
      burst: 0,
      approvedCount: 10,
      medianApprovedAmount: 10_000,
      payeeSeen: true,
      recipientSeen: null,
    },
    now: NOW,
    geo: "DE",
  };
}

export function given(change: Change): RiskInput {
  const input = clean();
  change(input);
  return input;
}

export function withRules(rules: PolicyRules): Change {
  return (input) => {
    input.rules = normalizeRules(rules);
  };
}

export function limits(constraints: unknown[], payees: OpenMandateLimits["allowedPayees"] = []) {
  return (input: RiskInput) => {
    input.mandateType = "open_payment";
    input.facts.limits = {
      maxAmounts: [],
      allowedPayees: payees,
      constraints: constraints as OpenMandateLimits["constraints"],
    };
  };
}

export function both(...changes: Change[]) {
  return (input: RiskInput) => {
    for (const change of changes) change(input);
  };
}

export const nothing: ComponentResult = { signals: [], rejection_reasons: [], confidences: {} };
export function part(signals: Signal[]): ComponentResult {
  return { signals, rejection_reasons: [], confidences: {} };
}

export type Change = (input: RiskInput) => void;
