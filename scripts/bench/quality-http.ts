// Parts (b) and (c) of `npm run bench:quality` (issue 39): the Handbook's benchmark end to end
// through the HTTP API of the service (its deployable bundle under workerd with its Queues,
// or wrangler dev as `npm run dev` runs it; the embedded database or DATABASE_URL's), at a
// reduced scale. Each customer is a principal with its agent, each terminal a payee, the
// amounts USD in cents, the time a test clock's:
//
//   (b) register the agents; import the 45 days before the test week as history, each fraud
//       labelled 7 days after it happened; train a model as of the test week's first day
//       (POST /v1/risk-models on a test clock), activate it; stream the test week through
//       POST /v1/assess on test clocks; score the test rows by `outcome.model.probability`.
//   (c) the same in a second org with no model: today's hand-weighted `risk_score`.
//   offline: the service's own trainer (src/model/training.ts) on the same history as of the
//       same instant, scoring the same rows with the same features: what (b) must come within
//       0.03 AP of.
//
// The stream runs on several clocks at once (`lanes`), each advanced to each of its payments'
// exact time: payments are sent in batches of one simulated minute, so a payment may miss
// another made less than a minute before it by the same agent or at the same payee in another
// lane (the offline reference sees it); the figures show what that costs.

import { boostedProbability } from "../../src/model/boosting.ts";
import { FEATURE_NAMES, featureTable, type HistoryEvent } from "../../src/model/features.ts";
import { aucRoc, averagePrecision, cardPrecisionAtK } from "../../src/model/metrics.ts";
import { trainRiskModel } from "../../src/model/training.ts";
import type { Client } from "./assess-http.ts";
import { handbookSplit } from "./quality/handbook.ts";
import { SIMULATION_START_MS, type Transactions } from "./quality/simulator.ts";

export const DAY_MS = 86_400_000;
export const LABEL_DELAY_MS = 7 * DAY_MS;
export const TEST_START_DAY = 129;
export const HISTORY_DAYS = 45;
const IMPORT_BATCH = 10_000;
const STREAM_BATCH_MS = 60_000;

export interface Scores {
  auc: number;
  ap: number;
  cp: number;
}

export interface EndToEnd {
  model: Scores;
  offline: Scores;
  handWeighted: Scores;
  lines: string[];
}

export interface Org {
  name: string;
  headers: Record<string, string>;
  /** Each customer's agent id, by customer number (only the org's customers). */
  agents: string[];
}

/** A transaction's time, epoch ms: the simulator's, or shifted to another date. */
export type Timeline = (i: number) => number;

const KEY_SCOPES = [
  "assess:write",
  "assess:read",
  "agents:write",
  "agents:read",
  "policy:write",
  "policy:read",
];

/** Epoch ms of transaction i. */
export function timeOf(tx: Transactions, i: number): number {
  return SIMULATION_START_MS + (tx.seconds[i] as number) * 1000;
}

function cents(tx: Transactions, i: number): number {
  return Math.round((tx.amount[i] as number) * 100);
}

/** A test-mode org with one agent (and principal) per customer (0..n-1, or those listed). */
export async function newOrg(
  client: Client,
  session: Record<string, string>,
  name: string,
  customers: number | readonly number[],
  log: (line: string) => void,
): Promise<Org> {
  const numbers =
    typeof customers === "number" ? Array.from({ length: customers }, (_, c) => c) : customers;
  // Each org its own signed-up user: one org per user.
  await json(client, "/v1/orgs", 201, { method: "POST", headers: session });
  const created = await json(client, "/v1/api-keys", 201, {
    method: "POST",
    headers: session,
    body: JSON.stringify({ name: `bench-quality-${name}`, scopes: KEY_SCOPES, mode: "test" }),
  });
  const headers = { "x-api-key": String(created.key) };
  const started = performance.now();
  const agents: string[] = [];
  await inParallel(numbers.length, 8, async (n) => {
    const c = numbers[n] as number;
    const principal = await json(client, "/v1/principals", 201, {
      method: "POST",
      headers: session,
      body: JSON.stringify({ type: "individual", name: `Customer ${c}`, external_ref: `c-${c}` }),
    });
    const agent = await json(client, "/v1/agents", 201, {
      method: "POST",
      headers: session,
      body: JSON.stringify({ principal_id: principal.id, name: `Agent of customer ${c}` }),
    });
    agents[c] = String(agent.id);
  });
  log(`  ${name}: ${numbers.length} principals and agents in ${seconds(started)} s`);
  return { name, headers, agents };
}

/** The 45 days before the test week, as the org's history, 10,000 records per call. */
export async function importHistory(
  client: Client,
  org: Org,
  tx: Transactions,
  rows: number[],
  log: (line: string) => void,
  at: Timeline = (i) => timeOf(tx, i),
) {
  const started = performance.now();
  for (let k = 0; k < rows.length; k += IMPORT_BATCH) {
    const records = rows.slice(k, k + IMPORT_BATCH).map((i) => {
      const time = at(i);
      return {
        id: `tx-${i}`,
        occurred_at: new Date(time).toISOString(),
        agent_id: org.agents[tx.customer[i] as number],
        payee: { id: `terminal-${tx.terminal[i]}` },
        amount: { amount: cents(tx, i), currency: "USD" },
        ...(tx.fraud[i]
          ? { label: { label: "fraud", labeled_at: new Date(time + LABEL_DELAY_MS).toISOString() } }
          : {}),
      };
    });
    await json(client, "/v1/history/transactions", 201, {
      method: "POST",
      headers: org.headers,
      body: JSON.stringify({ records }),
    });
  }
  const s = seconds(started);
  log(
    `  ${org.name}: ${rows.length} history records imported in ${s} s ` +
      `(${Math.round(rows.length / Number(s))} records/s)`,
  );
}

export async function newClock(client: Client, org: Org, at: number): Promise<string> {
  const clock = await json(client, "/v1/test-clocks", 201, {
    method: "POST",
    headers: org.headers,
    body: JSON.stringify({ frozen_time: new Date(at).toISOString() }),
  });
  return String(clock.id);
}

/** Trains as of `at` on a test clock, waits for it, activates it; answers the model. */
export async function trainAndActivate(
  client: Client,
  org: Org,
  at: number,
  log: (line: string) => void,
): Promise<Record<string, unknown>> {
  const clock = await newClock(client, org, at);
  const started = performance.now();
  const created = await json(client, "/v1/risk-models", 202, {
    method: "POST",
    headers: org.headers,
    body: JSON.stringify({
      test_clock: clock,
      label_delay: LABEL_DELAY_MS / 1000,
      training_window: 7 * 86_400,
    }),
  });
  let model = created;
  while (model.status === "training") {
    await new Promise((resolve) => setTimeout(resolve, 1000));
    model = await json(client, `/v1/risk-models/${created.id}`, 200, { headers: org.headers });
  }
  if (model.status !== "ready") {
    throw new Error(`training failed: ${model.status} ${String(model.failure_reason)}`);
  }
  log(
    `  ${org.name}: model ${model.id} trained in ${seconds(started)} s: ${JSON.stringify(model.counts)}`,
  );
  await json(client, `/v1/risk-models/${created.id}/activate`, 200, {
    method: "POST",
    headers: org.headers,
  });
  return model;
}

/**
 * The test week through POST /v1/assess: each payment at its own time on one of `lanes` test
 * clocks. Answers the probability (or, without a model, the risk score) of each streamed row;
 * `seen` is shown each answer's outcome.
 */
export async function stream(
  client: Client,
  org: Org,
  tx: Transactions,
  rows: number[],
  lanes: number,
  withModel: boolean,
  log: (line: string) => void,
  options: { at?: Timeline; seen?: (i: number, outcome: Record<string, unknown>) => void } = {},
): Promise<Map<number, number>> {
  const at = options.at ?? ((i: number) => timeOf(tx, i));
  const first = at(rows[0] as number);
  const clocks = await Promise.all(
    Array.from({ length: lanes }, () => newClock(client, org, first)),
  );
  const scores = new Map<number, number>();
  const started = performance.now();
  let k = 0;
  while (k < rows.length) {
    const end = at(rows[k] as number) + STREAM_BATCH_MS;
    const batch: number[] = [];
    while (k < rows.length && at(rows[k] as number) < end) batch.push(rows[k++] as number);
    const perLane = clocks.map((_, lane) => batch.filter((_, b) => b % lanes === lane));
    await Promise.all(
      perLane.map(async (mine, lane) => {
        const clock = clocks[lane] as string;
        for (const i of mine) {
          const time = at(i);
          await json(client, `/v1/test-clocks/${clock}/advance`, 200, {
            method: "POST",
            headers: org.headers,
            body: JSON.stringify({ frozen_time: new Date(time).toISOString() }),
          });
          const answer = await json(client, "/v1/assess", 200, {
            method: "POST",
            headers: org.headers,
            body: JSON.stringify({
              kind: "ap2_payment",
              mandate: {
                vct: "mandate.payment.1",
                transaction_id: `tx-${i}`,
                payee: { id: `terminal-${tx.terminal[i]}`, name: `Terminal ${tx.terminal[i]}` },
                payment_amount: { amount: cents(tx, i), currency: "USD" },
                payment_instrument: { id: `card-${tx.customer[i]}`, type: "card" },
              },
              agent_id: org.agents[tx.customer[i] as number],
              test_clock: clock,
            }),
          });
          const outcome = (answer.outcome as { outcome: Record<string, unknown> }).outcome;
          options.seen?.(i, outcome);
          const model = outcome.model as { probability: number } | undefined;
          if (withModel && !model) throw new Error(`assessment of tx-${i} has no outcome.model`);
          scores.set(
            i,
            withModel ? (model as { probability: number }).probability : Number(outcome.risk_score),
          );
        }
      }),
    );
    if (scores.size % 5000 < batch.length) {
      log(`  ${org.name}: ${scores.size}/${rows.length} assessed (${seconds(started)} s)`);
    }
  }
  const s = seconds(started);
  log(
    `  ${org.name}: ${rows.length} payments streamed in ${s} s ` +
      `(${Math.round(rows.length / Number(s))} assessments/s with a clock advance each, ${lanes} lanes)`,
  );
  return scores;
}

function evaluate(
  tx: Transactions,
  rows: Int32Array,
  score: (i: number) => number,
  k: number,
): Scores {
  const scores = Float64Array.from(rows, score);
  const labels = Uint8Array.from(rows, (i) => tx.fraud[i] as number);
  const cards = Array.from(rows, (i, n) => ({
    day: tx.day[i] as number,
    card: tx.customer[i] as number,
    fraud: tx.fraud[i] as number,
    score: scores[n] as number,
  }));
  return {
    auc: aucRoc(labels, scores),
    ap: averagePrecision(labels, scores),
    cp: cardPrecisionAtK(cards, k),
  };
}

/**
 * The service's trainer on the same history as of the same instant, offline: the model (b)'s
 * training job should have made, scoring the test rows from the same events (history and the
 * streamed week, each fraud known 7 days after it happened).
 */
function offlineReference(
  tx: Transactions,
  historyRows: number[],
  streamRows: number[],
  testRows: Int32Array,
  asOf: number,
): (i: number) => number {
  const all = [...historyRows, ...streamRows];
  const events: HistoryEvent[] = all.map((i) => {
    const time = timeOf(tx, i);
    return {
      time,
      agent: tx.customer[i] as number,
      payee: tx.terminal[i] as number,
      amount: cents(tx, i),
      fraudKnownAt: tx.fraud[i] ? time + LABEL_DELAY_MS : null,
    };
  });
  const trained = trainRiskModel(
    events.filter((e) => e.time < asOf),
    { asOf, labelDelayMs: LABEL_DELAY_MS, trainingWindowMs: 7 * DAY_MS },
  );
  if (trained.status !== "ready") throw new Error(`offline training failed: ${trained.reason}`);
  const position = new Map(all.map((i, n) => [i, n]));
  const targets = Int32Array.from(testRows, (i) => position.get(i) as number);
  const x = featureTable(events, targets, { labelDelayMs: LABEL_DELAY_MS });
  const width = FEATURE_NAMES.length;
  const byRow = new Map<number, number>();
  testRows.forEach((i, n) => {
    const p = boostedProbability(trained.model, x.subarray(n * width, (n + 1) * width));
    byRow.set(i, Math.round(p * 10_000) / 10_000);
  });
  return (i) => byRow.get(i) as number;
}

/** Runs (b), (c) and the offline reference against the service at `client`. */
export async function endToEnd(options: {
  client: Client;
  /** A session for each org to make (one org per signed-up user). */
  sessions: [Record<string, string>, Record<string, string>];
  tx: Transactions;
  cardsK: number;
  lanes: number;
  log: (line: string) => void;
}): Promise<EndToEnd> {
  const { client, tx, log, lanes } = options;
  let customers = 0;
  for (let i = 0; i < tx.count; i++)
    customers = Math.max(customers, (tx.customer[i] as number) + 1);
  const asOf = SIMULATION_START_MS + TEST_START_DAY * DAY_MS;
  const historyRows: number[] = [];
  const streamRows: number[] = [];
  for (let i = 0; i < tx.count; i++) {
    const day = tx.day[i] as number;
    if (day >= TEST_START_DAY - HISTORY_DAYS && day < TEST_START_DAY) historyRows.push(i);
    else if (day >= TEST_START_DAY && day < TEST_START_DAY + 7) streamRows.push(i);
  }
  // The Handbook's test rows: the test week without the customers known to be compromised.
  const testRows = handbookSplit(tx).test;
  log(
    `end to end: ${customers} customers, ${historyRows.length} history records, ` +
      `${streamRows.length} payments streamed, ${testRows.length} test rows`,
  );

  const offline = offlineReference(tx, historyRows, streamRows, testRows, asOf);
  const [modelSession, plainSession] = options.sessions;
  const withModel = await newOrg(client, modelSession, "with model", customers, log);
  await importHistory(client, withModel, tx, historyRows, log);
  const model = await trainAndActivate(client, withModel, asOf, log);
  const probabilities = await stream(client, withModel, tx, streamRows, lanes, true, log);

  const plain = await newOrg(client, plainSession, "no model", customers, log);
  await importHistory(client, plain, tx, historyRows, log);
  const handScores = await stream(client, plain, tx, streamRows, lanes, false, log);

  const metrics = model.metrics as Record<string, number>;
  return {
    model: evaluate(tx, testRows, (i) => probabilities.get(i) as number, options.cardsK),
    offline: evaluate(tx, testRows, offline, options.cardsK),
    handWeighted: evaluate(tx, testRows, (i) => handScores.get(i) as number, options.cardsK),
    lines: [
      `model ${model.id}: held-out AUC ${metrics.auc_roc}, AP ${metrics.average_precision}, ` +
        `CP@100 ${metrics.card_precision_at_100}`,
    ],
  };
}

/**
 * A call that must answer `expected`, sent again after a 429 (the rate limits hold on `npm run
 * dev` too: a stream advances a clock per payment) once its `Retry-After` has passed, or after
 * wrangler dev restarted the Worker under it.
 */
export async function json(
  client: Client,
  path: string,
  expected: number,
  init: Parameters<Client["send"]>[1] = {},
): Promise<Record<string, unknown>> {
  for (let attempt = 0; ; attempt++) {
    const method = init.method ?? "GET";
    const reply = await client.send(path, init).catch((error: Error) => {
      // A kept-alive socket the dev server closed as the request went out ("socket hang up"):
      // a GET is safe to send again, and so are the stream's POSTs, which are idempotent (a
      // clock advanced to where it is changes nothing; an assessment sent again is answered
      // as the first: the same content is the same assessment). Nothing else is.
      if ((method === "GET" || idempotent(path)) && attempt < 5) return null;
      throw new Error(`${method} ${path}: ${error.message}`);
    });
    if (reply === null) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      continue;
    }
    // 503 "Your worker restarted mid-request" is wrangler dev's, not the service's.
    const restarted = reply.status === 503 && reply.text.includes("restarted mid-request");
    if ((reply.status === 429 || restarted) && attempt < 100) {
      const wait = Number(reply.headers["retry-after"] ?? 1);
      await new Promise((resolve) => setTimeout(resolve, Math.max(0.2, wait) * 1000));
      continue;
    }
    if (reply.status !== expected) {
      throw new Error(
        `${init.method ?? "GET"} ${path}: ${reply.status} ${reply.text.slice(0, 500)}`,
      );
    }
    return JSON.parse(reply.text) as Record<string, unknown>;
  }
}

const idempotent = (path: string) => path === "/v1/assess" || path.endsWith("/advance");

/** Runs `work(0..count-1)` with at most `width` at a time. */
async function inParallel(count: number, width: number, work: (n: number) => Promise<void>) {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < count) await work(next++);
    }),
  );
}

export function seconds(since: number): string {
  return ((performance.now() - since) / 1000).toFixed(1);
}
