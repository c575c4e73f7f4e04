// The Fraud Detection Handbook's transaction simulator (Le Borgne et al., chapter 3,
// "SimulatedDataset"), ported draw for draw: with seed 0 and the Handbook's parameters it
// regenerates the Handbook's dataset (1,754,155 transactions, 14,681 frauds). This is the
// benchmark's data, never the product's knowledge: nothing under src/ may import it.

import { numpyArgsort } from "./numpy-sort.ts";
import { NumpyRandomState, PythonRandom } from "./random.ts";

export interface SimulatorOptions {
  /** 0 is the Handbook's own dataset; seed s offsets every seed the simulator uses by s·10⁶. */
  seed: number;
  customers: number;
  terminals: number;
  days: number;
  /** A customer uses the terminals within this distance on a 100×100 square. */
  radius: number;
  /** Scenario 2: terminals compromised each day (a mean: fractions alternate 0/1 days). */
  compromisedTerminalsPerDay: number;
  /** Scenario 3: customers compromised each day (a mean, like the terminals). */
  compromisedCustomersPerDay: number;
}

/** The Handbook's parameters (its notebook's `generate_dataset` call and `add_frauds`). */
export const HANDBOOK: SimulatorOptions = {
  seed: 0,
  customers: 5000,
  terminals: 10000,
  days: 183,
  radius: 5,
  compromisedTerminalsPerDay: 2,
  compromisedCustomersPerDay: 3,
};

/**
 * The Handbook's simulator at another size, scaled so that a customer reaches as many
 * terminals (the radius grows as √(10,000 / terminals): the expected number of terminals in
 * reach, terminals·πr²/100², stays 78.5) and the fraud rate stays the Handbook's (terminals and
 * customers compromised per day in proportion to their numbers: scenario 2 touches the same
 * share of terminals, scenario 3 the same share of customers).
 */
export function scaledOptions(
  seed: number,
  customers: number,
  terminals: number,
): SimulatorOptions {
  return {
    ...HANDBOOK,
    seed,
    customers,
    terminals,
    radius: HANDBOOK.radius * Math.sqrt(HANDBOOK.terminals / terminals),
    compromisedTerminalsPerDay:
      (HANDBOOK.compromisedTerminalsPerDay * terminals) / HANDBOOK.terminals,
    compromisedCustomersPerDay:
      (HANDBOOK.compromisedCustomersPerDay * customers) / HANDBOOK.customers,
  };
}

/** The dataset in columns, in the Handbook's order: by time, TRANSACTION_ID = the row index. */
export interface Transactions {
  count: number;
  /** Seconds since 2018-04-01T00:00:00 (the Handbook's TX_TIME_SECONDS). */
  seconds: Int32Array;
  /** TX_TIME_DAYS. */
  day: Int32Array;
  customer: Int32Array;
  terminal: Int32Array;
  /** TX_AMOUNT in dollars, as the Handbook keeps it (a float; scenario 3 multiplies it by 5). */
  amount: Float64Array;
  fraud: Uint8Array;
  /** TX_FRAUD_SCENARIO: 0 genuine, 1 amount, 2 terminal, 3 customer. */
  scenario: Uint8Array;
}

export const SIMULATION_START_MS = Date.UTC(2018, 3, 1);
const DAY = 86400;
const SEED_STRIDE = 1_000_000;

/** numpy's `np.round(x, 2)`: multiply, round half to even, divide. */
function round2(x: number): number {
  const y = x * 100;
  let r = Math.round(y);
  if (r - y === 0.5 && r % 2 !== 0) r -= 1;
  return r / 100;
}

interface Customer {
  meanAmount: number;
  stdAmount: number;
  meanTxPerDay: number;
  terminals: number[];
}

function customerProfiles(o: SimulatorOptions, base: number): Customer[] {
  const rs = new NumpyRandomState(base);
  const raw: { x: number; y: number; mean: number; perDay: number }[] = [];
  for (let c = 0; c < o.customers; c++) {
    const x = rs.uniform(0, 100);
    const y = rs.uniform(0, 100);
    const mean = rs.uniform(5, 100);
    const perDay = rs.uniform(0, 4);
    raw.push({ x, y, mean, perDay });
  }
  const trs = new NumpyRandomState(base + 1);
  const tx = new Float64Array(o.terminals);
  const ty = new Float64Array(o.terminals);
  for (let t = 0; t < o.terminals; t++) {
    tx[t] = trs.uniform(0, 100);
    ty[t] = trs.uniform(0, 100);
  }
  return raw.map(({ x, y, mean, perDay }) => {
    const terminals: number[] = [];
    for (let t = 0; t < o.terminals; t++) {
      const dx = x - (tx[t] as number);
      const dy = y - (ty[t] as number);
      if (Math.sqrt(dx * dx + dy * dy) < o.radius) terminals.push(t);
    }
    return { meanAmount: mean, stdAmount: mean / 2, meanTxPerDay: perDay, terminals };
  });
}

/** How many to compromise on `day` so that the mean per day is `rate` (2 and 3 stay 2 and 3). */
function countOnDay(rate: number, day: number): number {
  return Math.floor((day + 1) * rate + 1e-9) - Math.floor(day * rate + 1e-9);
}

/** Generates the dataset: profiles, transactions in time order, then the three fraud scenarios. */
export function simulate(o: SimulatorOptions): Transactions {
  const base = o.seed * SEED_STRIDE;
  const customers = customerProfiles(o, base);
  const secs: number[] = [];
  const cust: number[] = [];
  const term: number[] = [];
  const amt: number[] = [];
  const rs = new NumpyRandomState(0);
  const py = new PythonRandom(0);
  customers.forEach((p, c) => {
    rs.seed(base + c);
    py.seed(base + c);
    for (let day = 0; day < o.days; day++) {
      const n = rs.poisson(p.meanTxPerDay);
      for (let i = 0; i < n; i++) {
        const time = Math.trunc(rs.normal(DAY / 2, 20000));
        if (time <= 0 || time >= DAY) continue;
        let amount = rs.normal(p.meanAmount, p.stdAmount);
        if (amount < 0) amount = rs.uniform(0, p.meanAmount * 2);
        amount = round2(amount);
        if (p.terminals.length === 0) continue;
        secs.push(time + day * DAY);
        cust.push(c);
        term.push(py.choice(p.terminals));
        amt.push(amount);
      }
    }
  });
  const tx = sortByTime(secs, cust, term, amt);
  addFrauds(tx, o, base);
  return tx;
}

// pandas' `sort_values("TX_DATETIME")` on the customer-by-customer frame: numpy's unstable
// quicksort, reproduced, so that tied seconds get the Handbook's TRANSACTION_IDs too.
function sortByTime(secs: number[], cust: number[], term: number[], amt: number[]): Transactions {
  const count = secs.length;
  const order = numpyArgsort(secs);
  const tx: Transactions = {
    count,
    seconds: new Int32Array(count),
    day: new Int32Array(count),
    customer: new Int32Array(count),
    terminal: new Int32Array(count),
    amount: new Float64Array(count),
    fraud: new Uint8Array(count),
    scenario: new Uint8Array(count),
  };
  for (let k = 0; k < count; k++) {
    const i = order[k] as number;
    const s = secs[i] as number;
    tx.seconds[k] = s;
    tx.day[k] = Math.floor(s / DAY);
    tx.customer[k] = cust[i] as number;
    tx.terminal[k] = term[i] as number;
    tx.amount[k] = amt[i] as number;
  }
  return tx;
}

/** Row indices grouped by a key, each group in row (time) order. */
function groupRows(key: Int32Array, groups: number): Int32Array[] {
  const sizes = new Int32Array(groups);
  for (const k of key) sizes[k] = (sizes[k] as number) + 1;
  const out = Array.from(sizes, (n) => new Int32Array(n));
  const fill = new Int32Array(groups);
  key.forEach((k, row) => {
    (out[k] as Int32Array)[fill[k] as number] = row;
    fill[k] = (fill[k] as number) + 1;
  });
  return out;
}

function addFrauds(tx: Transactions, o: SimulatorOptions, base: number): void {
  // Scenario 1: any amount over 220.
  for (let i = 0; i < tx.count; i++) {
    if ((tx.amount[i] as number) > 220) {
      tx.fraud[i] = 1;
      tx.scenario[i] = 1;
    }
  }
  let lastDay = 0;
  for (const d of tx.day) lastDay = Math.max(lastDay, d);
  // Scenario 2: each day, terminals compromised for 28 days: all their transactions are frauds.
  const byTerminal = groupRows(tx.terminal, o.terminals);
  for (let day = 0; day < lastDay; day++) {
    const n = countOnDay(o.compromisedTerminalsPerDay, day);
    if (n === 0) continue;
    for (const t of new NumpyRandomState(base + day).choiceWithoutReplacement(o.terminals, n)) {
      for (const i of byTerminal[t] as Int32Array) {
        const d = tx.day[i] as number;
        if (d >= day && d < day + 28) {
          tx.fraud[i] = 1;
          tx.scenario[i] = 2;
        }
      }
    }
  }
  // Scenario 3: each day, customers compromised for 14 days: a third of their transactions
  // (chosen by Python's random.sample) are frauds at five times the amount.
  const byCustomer = groupRows(tx.customer, o.customers);
  const py = new PythonRandom(0);
  for (let day = 0; day < lastDay; day++) {
    const n = countOnDay(o.compromisedCustomersPerDay, day);
    if (n === 0) continue;
    const chosen = new NumpyRandomState(base + day).choiceWithoutReplacement(o.customers, n);
    const rows: number[] = [];
    for (const c of chosen) {
      for (const i of byCustomer[c] as Int32Array) {
        const d = tx.day[i] as number;
        if (d >= day && d < day + 14) rows.push(i);
      }
    }
    rows.sort((a, b) => a - b);
    py.seed(base + day);
    for (const i of py.sample(rows, Math.floor(rows.length / 3))) {
      tx.amount[i] = (tx.amount[i] as number) * 5;
      tx.fraud[i] = 1;
      tx.scenario[i] = 3;
    }
  }
}
