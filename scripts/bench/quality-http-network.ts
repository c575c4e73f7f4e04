// `npm run bench:quality -- --orgs 3 --http` (issue 41): the network benchmark of
// quality/network.ts through the HTTP API of the service (the deployable bundle under workerd
// with wrangler.toml's Queues, or wrangler dev with --runtime wrangler; the embedded database
// or DATABASE_URL's). The simulated population is split across N
// orgs that share the terminals (payees), customer mod N, each org twice:
//
//   on:  an org that contributes and consumes in test mode (POST /v1/network-settings, as its
//        owner's session), so its model trains on, and its assessments read, the counts the
//        other orgs' contributions release;
//   off: an org that never joins: the same customers, the same history, no network.
//
// Each org registers its customers' agents, imports the 45 days before the test week as history
// (each fraud labelled 7 days after it happened); the "on" orgs then wait until the network holds
// every org's import (`contributed_through` of their settings passes the last import), all train
// as of the test week's first day on a test clock and activate the model, and stream their own
// payments of the test week through POST /v1/assess on test clocks. The figures are computed from
// `outcome.model.probability` over each org's rows of the Handbook's test set.
//
// The network counts only the last 180 days of the wall clock (docs/network.md, "Retention"):
// the simulated 2018 calendar is moved, whole days, so that the test week ends yesterday. Every
// payment keeps its weekday and time of day; nothing the model reads depends on the year.
//
// What the stream does not do: the test week's own payments are not contributed while it runs
// (contributions come from labels, imports and the Cron sweep, which neither runtime runs
// here), so an org reads the other orgs' history only; the offline benchmark also counts the
// others' test-week payments as "seen" (never as fraud: their labels become known after the
// week). That moves the crowd a count needs, not any fraud count.

import type { Client } from "./assess-http.ts";
import { handbookSplit } from "./quality/handbook.ts";
import { type OrgResult, orgScores } from "./quality/network.ts";
import { HANDBOOK, SIMULATION_START_MS, type Transactions } from "./quality/simulator.ts";
import {
  DAY_MS,
  HISTORY_DAYS,
  importHistory,
  json,
  newOrg,
  type Org,
  seconds,
  stream,
  TEST_START_DAY,
  type Timeline,
  timeOf,
  trainAndActivate,
} from "./quality-http.ts";

const CONTRIBUTION_TIMEOUT_MS = 20 * 60_000;

/**
 * An org's figures through the API: the offline benchmark's, but for the share of payees
 * released (through the API a count under k reads 0, like a payee nobody flagged), with
 * `testFlaggedByNetwork` read from `outcome.network.payee_fraud_orgs` ≥ 1.
 */
export type HttpOrgResult = Omit<OrgResult, "testReleased"> & {
  /** The most `payee_fraud_orgs` any of its assessments read. */
  maxPayeeFraudOrgs: number;
};

type Session = () => Promise<Record<string, string>>;

/**
 * Polls an "on" org's settings until it has contributed everything recorded before `after` (the
 * end of its last import). Its import's own message does it ten seconds later; should its
 * consumer's bound fall just short of `after`, the settings are posted again, unchanged: a
 * member's POST asks for a contribution, and keeps the cursors.
 */
async function awaitContributions(
  client: Client,
  org: { name: string; session: Record<string, string>; after: number },
  log: (line: string) => void,
) {
  const started = performance.now();
  const headers = { ...org.session, "x-mode": "test" };
  for (let polls = 1; ; polls++) {
    const settings = await json(client, "/v1/network-settings", 200, { headers });
    const through = settings.contributed_through;
    if (typeof through === "string" && Date.parse(through) > org.after) break;
    if (performance.now() - started > CONTRIBUTION_TIMEOUT_MS) {
      throw new Error(`${org.name}: contributions did not reach its import: ${String(through)}`);
    }
    if (polls % 15 === 0) {
      log(`  ${org.name}: contributed through ${String(through)}; asking again`);
      await json(client, "/v1/network-settings", 200, {
        method: "POST",
        headers,
        body: JSON.stringify({ contribute: true, consume: true }),
      });
    }
    await new Promise((resolve) => setTimeout(resolve, 2000));
  }
  log(`  ${org.name}: the network holds its import (${seconds(started)} s of waiting)`);
}

/** Runs the N orgs on and off against the service at `client`. */
export async function networkEndToEnd(options: {
  client: Client;
  session: Session;
  tx: Transactions;
  orgs: number;
  lanes: number;
  log: (line: string) => void;
  /** Called with each org's figures as its streams end. */
  settled?: (result: HttpOrgResult) => void;
}): Promise<HttpOrgResult[]> {
  const { client, tx, orgs, lanes, log } = options;
  // Whole days, so that each UTC day of the simulation is one UTC day of the calendar.
  const yesterday = Math.floor(Date.now() / DAY_MS) * DAY_MS - DAY_MS;
  const shift = yesterday - (SIMULATION_START_MS + (TEST_START_DAY + 7) * DAY_MS);
  const at: Timeline = (i) => timeOf(tx, i) + shift;
  const asOf = SIMULATION_START_MS + TEST_START_DAY * DAY_MS + shift;
  const test = handbookSplit(tx).test;
  const orgOf = (i: number) => (tx.customer[i] as number) % orgs;

  const history: number[][] = Array.from({ length: orgs }, () => []);
  const week: number[][] = Array.from({ length: orgs }, () => []);
  const customers: number[][] = Array.from({ length: orgs }, () => []);
  let population = 0;
  for (let i = 0; i < tx.count; i++) {
    population = Math.max(population, (tx.customer[i] as number) + 1);
    const day = tx.day[i] as number;
    if (day >= TEST_START_DAY - HISTORY_DAYS && day < TEST_START_DAY) history[orgOf(i)]?.push(i);
    else if (day >= TEST_START_DAY && day < TEST_START_DAY + 7) week[orgOf(i)]?.push(i);
  }
  for (let c = 0; c < population; c++) customers[c % orgs]?.push(c);
  log(
    `network end to end: ${orgs} orgs of ${population} customers; the test week moved to ` +
      `${new Date(asOf).toISOString().slice(0, 10)}; history ${history.map((h) => h.length).join(" / ")}, ` +
      `streamed ${week.map((w) => w.length).join(" / ")} payments (on and off each)`,
  );

  const made: { on: Org; off: Org; onSession: Record<string, string> }[] = [];
  for (let org = 0; org < orgs; org++) {
    const onSession = await options.session();
    const on = await newOrg(client, onSession, `org ${org} on`, customers[org] ?? [], log);
    await json(client, "/v1/network-settings", 200, {
      method: "POST",
      headers: { ...onSession, "x-mode": "test" },
      body: JSON.stringify({ contribute: true, consume: true }),
    });
    const off = await newOrg(
      client,
      await options.session(),
      `org ${org} off`,
      customers[org] ?? [],
      log,
    );
    made.push({ on, off, onSession });
  }
  const imported: number[] = [];
  for (const [org, { on, off }] of made.entries()) {
    await importHistory(client, on, tx, history[org] ?? [], log, at);
    imported.push(Date.now());
    await importHistory(client, off, tx, history[org] ?? [], log, at);
  }
  for (const [org, { on, onSession }] of made.entries()) {
    await awaitContributions(
      client,
      { name: on.name, session: onSession, after: imported[org] as number },
      log,
    );
  }
  for (const { on, off } of made) {
    await trainAndActivate(client, on, asOf, log);
    await trainAndActivate(client, off, asOf, log);
  }

  const flagged = new Set<number>();
  const maxFraudOrgs = new Array<number>(orgs).fill(0);
  const figures = (org: number, on: Map<number, number>, off: Map<number, number>) => {
    const rows = test.filter((i) => orgOf(i) === org);
    const scoresOf = (map: Map<number, number>) =>
      Float64Array.from(rows, (i) => map.get(i) as number);
    const cardsK = Math.max(
      1,
      Math.round((100 * (customers[org]?.length ?? 0)) / HANDBOOK.customers),
    );
    return {
      org,
      customers: customers[org]?.length ?? 0,
      testRows: rows.length,
      testFrauds: rows.reduce((n, i) => n + (tx.fraud[i] as number), 0),
      s2Frauds: rows.filter((i) => tx.scenario[i] === 2).length,
      cardsK,
      on: orgScores(tx, rows, scoresOf(on), cardsK),
      off: orgScores(tx, rows, scoresOf(off), cardsK),
      testFlaggedByNetwork: rows.length
        ? rows.filter((i) => flagged.has(i)).length / rows.length
        : 0,
      maxPayeeFraudOrgs: maxFraudOrgs[org] ?? 0,
    };
  };
  // Each org's figures as soon as its two streams end: a run that dies late keeps the orgs done.
  return Promise.all(
    made.map(async ({ on, off }, org) => {
      const [onScores, offScores] = await Promise.all([
        stream(client, on, tx, week[org] ?? [], lanes, true, log, {
          at,
          seen: (i, outcome) => {
            const network = outcome.network as { payee_fraud_orgs: number } | undefined;
            if (!network) throw new Error(`org ${org} on: an assessment without outcome.network`);
            if (network.payee_fraud_orgs >= 1) flagged.add(i);
            maxFraudOrgs[org] = Math.max(maxFraudOrgs[org] ?? 0, network.payee_fraud_orgs);
          },
        }),
        stream(client, off, tx, week[org] ?? [], lanes, true, log, {
          at,
          seen: (_, outcome) => {
            if (outcome.network !== undefined) throw new Error(`org ${org} off read the network`);
          },
        }),
      ]);
      const result = figures(org, onScores, offScores);
      options.settled?.(result);
      return result;
    }),
  );
}
