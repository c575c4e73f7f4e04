// `npm run bench:quality -- --orgs N`: the Handbook's population split across N orgs that share
// its terminals (issue 41). Each customer belongs to one org (customer mod N); every terminal
// (payee) is everyone's. Each org trains the service's model on its own customers' payments
// only, with the network off (its features zeros, an org that does not consume) and on (the
// counts the other N − 1 orgs' contributions release), and is measured on its own test rows.
//
// The counts are the service's rules (drizzle/0029, network_signals and network_signal_series)
// computed offline: per payee, the other orgs that sent anything about it in the window (a
// payment, or a fraud label known then) and those whose fraud label on it became known then;
// every count 0 when fewer than k orgs sent anything about it, the asking org included when it
// did (the service's k: 3, never less); the org itself never counted. The Handbook labels frauds only (no payment is labelled legitimate), so the
// legitimate counts are 0 and every org's label precision is 1: weights change nothing. Agent
// keys are customers', each in one org: they never cross orgs, and the simulator has no
// issuers or instruments. What differs by purpose is the instant:
// - a test payment reads what the assess path reads: the 30 UTC days to its day, up to its own
//   time (payments before it, labels known before it);
// - a training payment reads what the training run reads: the series of the day before its
//   day, whole days (src/risk-models/network-read.ts).

import { boostedProbability, trainBoostedTrees } from "../../../src/model/boosting.ts";
import {
  FEATURE_NAMES,
  featureTable,
  type HistoryEvent,
  type NetworkCounts,
} from "../../../src/model/features.ts";
import { aucRoc, averagePrecision, cardPrecisionAtK } from "../../../src/model/metrics.ts";
import type { Split } from "./handbook.ts";
import { HANDBOOK, SIMULATION_START_MS, type Transactions } from "./simulator.ts";

const DAY_MS = 86_400_000;
const WINDOW_DAYS = 30;

export interface OrgScores {
  auc: number;
  ap: number;
  cp: number;
  /** On the org's genuine and scenario-2 test rows alone (compromised terminals). */
  s2: { ap: number; precision: number | null; recall: number; missedBeforeAlert: number | null };
}

export interface OrgResult {
  org: number;
  customers: number;
  testRows: number;
  testFrauds: number;
  s2Frauds: number;
  cardsK: number;
  off: OrgScores;
  on: OrgScores;
  /** Share of the org's test rows whose payee read a released fraud count ≥ 1. */
  testFlaggedByNetwork: number;
  /** Share of its test rows whose payee's counts were released at all (≥ k other orgs). */
  testReleased: number;
}

/** The alert threshold precision and recall on scenario 2 are read at. */
export const ALERT_PROBABILITY = 0.5;

/** Each (terminal, org)'s payment times and fraud-known times, in time order. */
class Contributions {
  readonly seen: Float64Array[];
  readonly known: Float64Array[];

  constructor(
    tx: Transactions,
    terminals: number,
    readonly orgs: number,
    labelDelayMs: number,
  ) {
    const seen = Array.from({ length: terminals * orgs }, () => [] as number[]);
    const known = Array.from({ length: terminals * orgs }, () => [] as number[]);
    for (let i = 0; i < tx.count; i++) {
      const slot = (tx.terminal[i] as number) * orgs + ((tx.customer[i] as number) % orgs);
      const time = timeOf(tx, i);
      (seen[slot] as number[]).push(time);
      if (tx.fraud[i]) (known[slot] as number[]).push(time + labelDelayMs);
    }
    this.seen = seen.map((l) => Float64Array.from(l));
    // Known times follow payment times: in order already (the delay is constant).
    this.known = known.map((l) => Float64Array.from(l));
  }

  /**
   * The released counts for `terminal` asked by `org` over [from, to]: null when fewer than k
   * orgs, the asker included when it saw the terminal, sent anything about it (drizzle/0029).
   * What is released counts the other orgs only.
   */
  counts(terminal: number, org: number, from: number, to: number, k: number) {
    let orgs = 0;
    let fraud = 0;
    let crowd = 0;
    for (let o = 0; o < this.orgs; o++) {
      const slot = terminal * this.orgs + o;
      const labelled = within(this.known[slot] as Float64Array, from, to);
      const sent = labelled || within(this.seen[slot] as Float64Array, from, to);
      if (sent) crowd++;
      if (o === org) continue;
      if (sent) orgs++;
      if (labelled) fraud++;
    }
    return crowd >= k ? { orgs, fraud } : null;
  }
}

function timeOf(tx: Transactions, i: number): number {
  return SIMULATION_START_MS + (tx.seconds[i] as number) * 1000;
}

/** Whether the sorted `list` has a value in [from, to]. */
function within(list: Float64Array, from: number, to: number): boolean {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((list[mid] as number) < from) lo = mid + 1;
    else hi = mid;
  }
  return lo < list.length && (list[lo] as number) <= to;
}

const dayStart = (ms: number) => Math.floor(ms / DAY_MS) * DAY_MS;

function networkOf(fraud: number): NetworkCounts {
  return {
    payee_fraud_orgs: fraud,
    payee_legitimate_orgs: 0,
    agent_key_fraud_orgs: 0,
    agent_key_legitimate_orgs: 0,
    issuer_fraud_orgs: 0,
    instrument_fraud_orgs: 0,
  };
}

/** AUC, AP, CP@k and scenario 2's figures of `probabilities`, one per row of `rows`. */
export function orgScores(
  tx: Transactions,
  rows: Int32Array,
  probabilities: Float64Array,
  cardsK: number,
): OrgScores {
  const labels = Uint8Array.from(rows, (i) => tx.fraud[i] as number);
  const cards = Array.from(rows, (i, r) => ({
    day: tx.day[i] as number,
    card: tx.customer[i] as number,
    fraud: tx.fraud[i] as number,
    score: probabilities[r] as number,
  }));
  // Scenario 2 alone: the genuine rows and the compromised terminals' frauds.
  const s2: number[] = [];
  rows.forEach((i, r) => {
    const scenario = tx.scenario[i] as number;
    if (scenario === 0 || scenario === 2) s2.push(r);
  });
  const s2Labels = Uint8Array.from(s2, (r) => labels[r] as number);
  const s2Scores = Float64Array.from(s2, (r) => probabilities[r] as number);
  let flagged = 0;
  let caught = 0;
  let frauds = 0;
  // Per compromised terminal, in time order: its frauds before the first one alerted (all of
  // them for a terminal never alerted). Lower is earlier.
  const first = new Map<number, { missed: number; alerted: boolean }>();
  for (const r of s2) {
    const fraud = labels[r] === 1;
    const alert = (probabilities[r] as number) >= ALERT_PROBABILITY;
    if (alert) flagged++;
    if (!fraud) continue;
    frauds++;
    if (alert) caught++;
    const terminal = tx.terminal[rows[r] as number] as number;
    const state = first.get(terminal) ?? { missed: 0, alerted: false };
    first.set(terminal, state);
    if (state.alerted) continue;
    if (alert) state.alerted = true;
    else state.missed++;
  }
  const missed = [...first.values()].map((v) => v.missed);
  return {
    auc: aucRoc(labels, probabilities),
    ap: averagePrecision(labels, probabilities),
    cp: cardPrecisionAtK(cards, cardsK),
    s2: {
      ap: averagePrecision(s2Labels, s2Scores),
      precision: flagged ? caught / flagged : null,
      recall: frauds ? caught / frauds : 0,
      missedBeforeAlert: missed.length ? missed.reduce((a, b) => a + b, 0) / missed.length : null,
    },
  };
}

/**
 * Trains and measures each of `orgs` orgs with the network off and on (see the header).
 * `split` is the Handbook's, over the whole population; each org keeps its own rows of it.
 */
export function orgsBench(
  tx: Transactions,
  split: Split,
  options: { orgs: number; k: number; terminals: number; labelDelayMs: number },
): OrgResult[] {
  const { orgs, k, labelDelayMs } = options;
  const contributions = new Contributions(tx, options.terminals, orgs, labelDelayMs);
  const results: OrgResult[] = [];
  const width = FEATURE_NAMES.length;
  for (let org = 0; org < orgs; org++) {
    // The org's own history, in time order, and where its split rows are in it.
    const local = new Int32Array(tx.count).fill(-1);
    const mine: number[] = [];
    for (let i = 0; i < tx.count; i++) {
      if ((tx.customer[i] as number) % orgs === org) {
        local[i] = mine.length;
        mine.push(i);
      }
    }
    const ownRows = (rows: Int32Array) => rows.filter((i) => local[i] !== -1);
    const train = ownRows(split.train);
    const test = ownRows(split.test);
    const events: HistoryEvent[] = mine.map((i) => {
      const time = timeOf(tx, i);
      return {
        time,
        agent: tx.customer[i] as number,
        payee: tx.terminal[i] as number,
        amount: tx.amount[i] as number,
        fraudKnownAt: tx.fraud[i] ? time + labelDelayMs : null,
      };
    });
    const toLocal = (rows: Int32Array) => rows.map((i) => local[i] as number);
    const trainY = Uint8Array.from(train, (i) => tx.fraud[i] as number);
    const customers = new Set(mine.map((i) => tx.customer[i])).size;
    // Card precision's k scaled with the org's customers, as the single-org run scales it.
    const cardsK = Math.max(1, Math.round((100 * customers) / HANDBOOK.customers));
    const run = (): { probabilities: Float64Array } => {
      const trainX = featureTable(events, toLocal(train), { labelDelayMs });
      const testX = featureTable(events, toLocal(test), { labelDelayMs });
      const model = trainBoostedTrees(trainX, trainY, width);
      const probabilities = new Float64Array(test.length);
      for (let r = 0; r < test.length; r++) {
        probabilities[r] = boostedProbability(model, testX.subarray(r * width, (r + 1) * width));
      }
      return { probabilities };
    };
    const off = run();
    // On: training rows read the day before theirs, whole days; test rows their own time.
    for (const i of train) {
      const t = timeOf(tx, i);
      const to = dayStart(t) - 1;
      const counted = contributions.counts(
        tx.terminal[i] as number,
        org,
        to + 1 - WINDOW_DAYS * DAY_MS,
        to,
        k,
      );
      (events[local[i] as number] as HistoryEvent).network = networkOf(counted?.fraud ?? 0);
    }
    let flagged = 0;
    let released = 0;
    for (const i of test) {
      const t = timeOf(tx, i);
      const from = dayStart(t) - (WINDOW_DAYS - 1) * DAY_MS;
      // Strictly before the payment: its own payment is the org's, never counted anyway.
      const counted = contributions.counts(tx.terminal[i] as number, org, from, t - 1, k);
      if (counted) released++;
      if ((counted?.fraud ?? 0) >= 1) flagged++;
      (events[local[i] as number] as HistoryEvent).network = networkOf(counted?.fraud ?? 0);
    }
    const on = run();
    const s2Frauds = test.filter((i) => tx.scenario[i] === 2).length;
    results.push({
      org,
      customers,
      testRows: test.length,
      testFrauds: test.reduce((n, i) => n + (tx.fraud[i] as number), 0),
      s2Frauds,
      cardsK,
      off: orgScores(tx, test, off.probabilities, cardsK),
      on: orgScores(tx, test, on.probabilities, cardsK),
      testFlaggedByNetwork: test.length ? flagged / test.length : 0,
      testReleased: test.length ? released / test.length : 0,
    });
  }
  return results;
}
