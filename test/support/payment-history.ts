/**
 * A payment history to train on, made up and learnable, as `POST /v1/history/transactions`
 * takes it: the Worker tests seed it into the database (test/worker/support/risk-models.ts),
 * the browser tests upload it through the console. Pure, so both runtimes import it.
 */

const DAY_MS = 86_400_000;

type FraudLabel = "fraud" | "chargeback";

/** A small deterministic generator (mulberry32): the same seed, the same history. */
function random(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** One payment of a generated history, as `POST /v1/history/transactions` takes a record. */
export interface HistoryRecord {
  id: string;
  occurred_at: string;
  agent_id: string;
  payee: { id: string };
  amount: { amount: number; currency: string };
  label?: { label: FraudLabel; labeled_at: string };
}

/**
 * `days` days of payments before `asOf`, `perDay` a day over the given agents and 30 payees,
 * in USD. Frauds are learnable: a few payees are compromised (most of their payments are
 * frauds) and large amounts are often frauds; each fraud's label (`label`) is known
 * `labelAfterMs` after the payment. The same seed gives the same history, its ids and payees
 * named after the seed (`txn-<seed>-<n>`, `payee-<seed>-<n>`).
 */
export function historyRecords(
  agents: readonly string[],
  options: HistoryOptions,
): HistoryRecord[] {
  const {
    asOf,
    days = 30,
    perDay = 60,
    seed = 1,
    labelAfterMs = 2 * DAY_MS,
    label = "fraud",
  } = options;
  const next = random(seed);
  const records: HistoryRecord[] = [];
  for (let i = 0; i < days * perDay; i++) {
    const time = asOf - days * DAY_MS + Math.floor(next() * days * DAY_MS);
    const payee = Math.floor(next() * 30);
    const large = next() < 0.08;
    const amount = large ? 40_000 + Math.floor(next() * 60_000) : 500 + Math.floor(next() * 9_500);
    const fraud = (payee < 3 && next() < 0.7) || (large && next() < 0.6) || next() < 0.01;
    records.push({
      id: `txn-${seed}-${i}`,
      occurred_at: new Date(time).toISOString(),
      agent_id: agents[Math.floor(next() * agents.length)] as string,
      payee: { id: `payee-${seed}-${payee}` },
      amount: { amount, currency: "USD" },
      ...(fraud
        ? { label: { label, labeled_at: new Date(time + labelAfterMs).toISOString() } }
        : {}),
    });
  }
  return records;
}

export interface HistoryOptions {
  /** Epoch ms: the history ends here. */
  asOf: number;
  days?: number;
  perDay?: number;
  seed?: number;
  labelAfterMs?: number;
  /** The label a fraud gets (default `fraud`). */
  label?: FraudLabel;
}
