/**
 * The network's counts as signals of the hand-weighted model (docs/risk-model.md, "Network
 * signals"): a payee, an agent key, a credential issuer key or a payment instrument that other
 * organizations confirmed in fraud in the last 30 days raises the score. Read from the input
 * (`outcome.network`), so a replay, a backtest and the shadow policy raise the same ones.
 */
import type { NetworkOutcome } from "../schemas/assessments";
import type { Severity, Signal, SignalType } from "./signals";
import { signal } from "./signals";

type FraudCount = "payee" | "agent_key" | "issuer" | "instrument";

const SIGNAL_OF: Record<FraudCount, SignalType> = {
  payee: "network_payee_fraud",
  agent_key: "network_agent_key_fraud",
  issuer: "network_issuer_fraud",
  instrument: "network_instrument_fraud",
};

const NAMED: Record<FraudCount, string> = {
  payee: "the payee",
  agent_key: "the agent key",
  issuer: "the credential's issuer key",
  instrument: "the payment instrument",
};

/**
 * How strong each count is. A payee, an agent key and an instrument name one party: one other
 * organization's confirmed fraud is `medium` (15 points, never a review alone), two or three
 * `high` (30), four or more `critical` (60). An issuer key signs for many principals, most of
 * them honest: `low` (5) until four organizations confirmed fraud, then `medium`. One org moves
 * a count by at most one (the network's poisoning bound), so no single org can raise more
 * than `medium` (`low` for an issuer).
 */
function severityOf(kind: FraudCount, orgs: number): Severity {
  if (kind === "issuer") return orgs >= 4 ? "medium" : "low";
  if (orgs >= 4) return "critical";
  return orgs >= 2 ? "high" : "medium";
}

const KINDS = Object.keys(SIGNAL_OF) as FraudCount[];

/** A signal per identifier confirmed in fraud at one other organization or more. */
export function networkSignals(network: NetworkOutcome | null | undefined): Signal[] {
  if (!network) return [];
  return KINDS.flatMap((kind) => {
    const orgs = network[`${kind}_fraud_orgs`];
    return orgs >= 1 ? [signal(SIGNAL_OF[kind], severityOf(kind, orgs))] : [];
  });
}

/**
 * A network signal's words with its count, for a reason ("the payee was confirmed in fraud at 4
 * other organizations this month"); null for any other signal type.
 */
export function networkSignalText(
  type: string,
  network: NetworkOutcome | null | undefined,
): string | null {
  const kind = KINDS.find((k) => SIGNAL_OF[k] === type);
  if (kind === undefined || !network) return null;
  const orgs = network[`${kind}_fraud_orgs`];
  const whom = orgs === 1 ? "1 other organization" : `${orgs} other organizations`;
  return `${NAMED[kind]} was confirmed in fraud at ${whom} this month`;
}
