import { type Json, jcs, sha256Hex } from "./assess";
import { ownerSql } from "./db";

// Risk models, test clocks and payment history written as the database holds them, for tests of
// what reads them (the assess path, backtests): the routes that make them have tests of their own.

export const DAY = 86_400_000;
export const T0 = Date.parse("2026-06-01T12:00:00.000Z");
export const PAYEE_KNOWN_FRAUDS = 19; // FEATURE_NAMES index in src/model/features.ts

/**
 * One tree: a payee with a known fraud is a fraud (log-odds −3 + 6 = 3, p = 0.9526), any other
 * payment is not (p = 0.0474). Thresholds: review from 0.3, deny from 0.8.
 */
const PARAMS = {
  kind: "boosted_trees",
  width: 28,
  base: -3,
  trees: [
    {
      feature: [PAYEE_KNOWN_FRAUDS, -1, -1],
      threshold: [0.5, 0, 0],
      left: [1, -1, -1],
      right: [2, -1, -1],
      value: [0.05, 0, 6],
    },
  ],
  importance: Array.from({ length: 28 }, (_, i) => (i === PAYEE_KNOWN_FRAUDS ? 1 : 0)),
};
const METRICS = {
  thresholds: {
    review: { probability: 0.3, precision: 0.5, recall: 0.9, fire_rate: 0.01 },
    deny: { probability: 0.8, precision: 0.9, recall: 0.8, fire_rate: 0.005 },
  },
};

/** A risk model row of the hand-built trees (none for one still `training`). */
export async function model(
  orgId: string,
  livemode: boolean,
  status: "active" | "shadow" | "ready" | "training",
) {
  const id = crypto.randomUUID();
  await ownerSql`insert into risk_models (id, org_id, livemode, status, version, as_of,
      label_delay_seconds, training_window_seconds, targets, metrics, params, created_at)
    values (${id}, ${orgId}, ${livemode}, ${status}, ${status === "active" ? 1 : null},
      ${new Date(T0).toISOString()}, ${7 * 86_400}, ${7 * 86_400},
      ${JSON.stringify({ review_precision: 0.5, deny_precision: 0.9 })}::jsonb,
      ${status === "training" ? null : JSON.stringify(METRICS)}::jsonb,
      ${status === "training" ? null : JSON.stringify(PARAMS)}::jsonb, now())`;
  return id;
}

export async function clock(orgId: string, at: number) {
  const id = crypto.randomUUID();
  await ownerSql`insert into test_clocks (id, org_id, frozen_time, created_at)
                 values (${id}, ${orgId}, ${new Date(at).toISOString()}, now())`;
  return id;
}

export async function moveClock(id: string, at: number) {
  await ownerSql`update test_clocks set frozen_time = ${new Date(at).toISOString()} where id = ${id}`;
}

/** The payee digest the assess path matches history by (pipeline.ts, counterpartyKey). */
export async function payeeKey(payeeId: string) {
  return `sha256:${await sha256Hex(jcs(payeeId))}`;
}

/** A payment of the org's history to `payeeId`, labelled fraud from `knownAt`. */
export async function fraudInHistory(
  orgId: string,
  agentId: string,
  payeeId: string,
  at: number,
  knownAt: number,
) {
  const id = crypto.randomUUID();
  await ownerSql`insert into payments (id, org_id, livemode, external_id, agent_id, kind,
      counterparty, amount, currency, occurred_at)
    values (${id}, ${orgId}, false, ${`ext-${id}`}, ${agentId}, 'payment',
      ${await payeeKey(payeeId)}, 5000, 'USD', ${new Date(at).toISOString()})`;
  await ownerSql`insert into payment_labels (id, org_id, payment_id, livemode, label, known_at, source)
    values (${crypto.randomUUID()}, ${orgId}, ${id}, false, 'fraud',
      ${new Date(knownAt).toISOString()}, 'import')`;
}

export function paymentTo(payeeId: string, agentId: string, testClock?: string): Json {
  return {
    mandate: {
      vct: "mandate.payment.1",
      transaction_id: `tx-${crypto.randomUUID()}`,
      payee: { id: payeeId, name: "Payee" },
      payment_amount: { amount: 5000, currency: "USD" },
      payment_instrument: { id: "stub", type: "card", description: "Card" },
    },
    agent_id: agentId,
    ...(testClock ? { test_clock: testClock } : {}),
  };
}
