import { AMOUNT_KINDS } from "./risk-input";
import {
  BEHAVIOR_LIMITS,
  type ComponentResult,
  confidenceOf,
  type Findings,
  type RiskInput,
} from "./risk-model";
import { signal } from "./signals";

const E164 = /^\+[1-9]\d{6,14}$/;

/**
 * Part of the "risk" stage: how this action compares with what the agent usually does, and who
 * receives it. Signals only, never rejection reasons: unusual is not forbidden.
 *
 * `behavioral_risk` starts at 0.5 with no approved history and reaches 1 at ten approvals,
 * because "nothing unusual" says little about an agent with no past. `recipient_risk` starts
 * at 1 when the history could tell whether the counterparty is new, and at 0.5 when it could
 * not (no agent, or no counterparty).
 */
export function scoreBehavior(input: RiskInput): ComponentResult {
  const found: Findings = { signals: [], rejection_reasons: [] };
  checkAmount(input, found);
  checkBurst(input, found);
  checkCounterparty(input, found);
  checkKind(input, found);
  const { approvedCount, payeeSeen, recipientSeen } = input.history;
  const behaviorBase = 0.5 + 0.05 * Math.min(Math.max(approvedCount, 0), 10);
  const recipientBase = payeeSeen === null && recipientSeen === null ? 0.5 : 1;
  return {
    ...found,
    confidences: {
      behavioral_risk: confidenceOf(behaviorBase, "behavior", found),
      recipient_risk: confidenceOf(recipientBase, "recipient", found),
    },
  };
}

/** Against the median of the agent's approved amounts in this currency, once there is one. */
function checkAmount(input: RiskInput, found: Findings): void {
  const { amount } = input.facts;
  const { medianApprovedAmount: median, approvedCount } = input.history;
  if (!AMOUNT_KINDS.includes(input.kind) || amount === null || median === null) return;
  if (approvedCount < BEHAVIOR_LIMITS.usualMinApproved || median <= 0) return;
  const ratio = amount.amount / median;
  if (ratio > BEHAVIOR_LIMITS.criticalRatio) {
    found.signals.push(signal("amount_above_usual", "critical"));
  } else if (ratio > BEHAVIOR_LIMITS.highRatio) {
    found.signals.push(signal("amount_above_usual", "high"));
  }
}

function checkBurst(input: RiskInput, found: Findings): void {
  const { burst } = input.history;
  if (burst >= BEHAVIOR_LIMITS.burstHigh) found.signals.push(signal("activity_burst", "high"));
  else if (burst >= BEHAVIOR_LIMITS.burstMedium) {
    found.signals.push(signal("activity_burst", "medium"));
  }
}

/** A first payment or a first contact is how most push-payment and spam fraud begins. */
function checkCounterparty(input: RiskInput, found: Findings): void {
  if (input.history.payeeSeen === false) found.signals.push(signal("payee_first_seen", "medium"));
  if (input.history.recipientSeen === false) {
    found.signals.push(signal("recipient_first_contact", "medium"));
  }
  // A device or network new for a known agent: an account taken over, or a key used elsewhere.
  // Low: agents move between hosts more often than people between phones.
  if (input.telemetry?.deviceSeen === false) found.signals.push(signal("device_first_seen", "low"));
  if (input.telemetry?.networkSeen === false) {
    found.signals.push(signal("network_first_seen", "low"));
  }
}

function checkKind(input: RiskInput, found: Findings): void {
  const { recipient } = input.facts;
  switch (input.kind) {
    case "message_send":
      if (recipient === null) found.signals.push(signal("recipient_missing", "medium"));
      return;
    case "voice_call":
      if (recipient === null) found.signals.push(signal("recipient_missing", "medium"));
      else if (!E164.test(recipient)) found.signals.push(signal("recipient_not_e164", "medium"));
      return;
    case "custom":
      // The service knows nothing of what a custom action does: say so in every outcome.
      found.signals.push(signal("custom_action", "low"));
      return;
    case "ap2_payment":
      return;
  }
}
