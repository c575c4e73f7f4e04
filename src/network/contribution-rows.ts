import { FRAUD_LABELS } from "../schemas/vocabulary";
import { type NetworkKey, type NetworkKind, networkDigest } from "./keys";

// What one read of an org's payments and labels contributes (docs/network.md, "What is shared"):
// for every network key, one row per (kind, digest, day) with the day's flags. Nothing else of a
// payment leaves the org: no amount, no time finer than the day, no id, no name.

/** The identifiers a payment can contribute, raw, as the org's own rows hold them. */
export interface PaymentIdentifiers {
  /** The payee: `payments.counterparty`, a digest of its id, the same at every org. */
  counterparty: string | null;
  /** An assessed payment's `{agent_key, issuer_key, instrument}` (assessments.network_ids). */
  network_ids: unknown;
  /** A payment without them (imported history): every key thumbprint of its agent. */
  agent_keys: unknown;
}

/** A payment, seen on `day` (its `occurred_at`, UTC). */
export interface SeenPayment extends PaymentIdentifiers {
  day: string;
}

/** A label of a payment, known on `day` (its `known_at`, UTC). */
export interface KnownLabel extends PaymentIdentifiers {
  day: string;
  label: string;
}

/** A row as network_contribute takes it. */
export interface ContributionRow {
  kind: NetworkKind;
  key_id: string;
  digest: string;
  day: string;
  seen: boolean;
  fraud: boolean;
  legitimate: boolean;
}

/** A label that confirms fraud; `legitimate` confirms the opposite; the rest say neither. */
const FRAUD = new Set<string>(FRAUD_LABELS);
const LEGITIMATE = "legitimate";

/** jsonb as the driver answers it: parsed already, or (over some transports) its text. */
function parsed(value: unknown): unknown {
  return typeof value === "string" ? JSON.parse(value) : value;
}

function text(value: unknown): string | null {
  return typeof value === "string" && value !== "" ? value : null;
}

/** The (kind, raw value) pairs of one payment. */
export function identifiersOf(row: PaymentIdentifiers): [NetworkKind, string][] {
  const found: [NetworkKind, string][] = [];
  const payee = text(row.counterparty);
  if (payee) found.push(["payee", payee]);
  const ids = parsed(row.network_ids) as Record<string, unknown> | null;
  if (ids && typeof ids === "object") {
    const agentKey = text(ids.agent_key);
    const issuer = text(ids.issuer_key);
    const instrument = text(ids.instrument);
    if (agentKey) found.push(["agent_key", agentKey]);
    if (issuer) found.push(["issuer", issuer]);
    if (instrument) found.push(["instrument", instrument]);
    return found;
  }
  const keys = parsed(row.agent_keys);
  if (Array.isArray(keys)) {
    for (const key of keys) {
      const thumbprint = text(key);
      if (thumbprint) found.push(["agent_key", thumbprint]);
    }
  }
  return found;
}

/**
 * The rows of a read: every identifier of every payment `seen` on its day, every identifier of
 * every labelled payment flagged `fraud` or `legitimate` on the day the label became known,
 * under each key, merged so that one (key, kind, digest, day) is one row.
 */
export function contributionRows(
  keys: readonly NetworkKey[],
  payments: readonly SeenPayment[],
  labels: readonly KnownLabel[],
): ContributionRow[] {
  const rows = new Map<string, ContributionRow>();
  const digests = new Map<string, string>();
  const add = (
    row: PaymentIdentifiers,
    day: string,
    flag: "seen" | "fraud" | "legitimate",
  ): void => {
    for (const [kind, value] of identifiersOf(row)) {
      for (const key of keys) {
        const memo = `${key.kid}\u0000${kind}\u0000${value}`;
        let digest = digests.get(memo);
        if (digest === undefined) {
          digest = networkDigest(key, kind, value);
          digests.set(memo, digest);
        }
        const id = `${key.kid}\u0000${kind}\u0000${digest}\u0000${day}`;
        let entry = rows.get(id);
        if (!entry) {
          entry = {
            kind,
            key_id: key.kid,
            digest,
            day,
            seen: false,
            fraud: false,
            legitimate: false,
          };
          rows.set(id, entry);
        }
        entry[flag] = true;
      }
    }
  };
  for (const payment of payments) add(payment, payment.day, "seen");
  for (const label of labels) {
    if (FRAUD.has(label.label)) add(label, label.day, "fraud");
    else if (label.label === LEGITIMATE) add(label, label.day, "legitimate");
  }
  return [...rows.values()];
}
