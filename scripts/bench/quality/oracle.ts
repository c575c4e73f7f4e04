// The benchmark's ceiling: a scorer that knows the simulator's rules (simulator.ts) and uses
// only what is knowable at a transaction's time, with the labels of transactions at least one
// label delay old. It says how far a learned model is from what the data allows on each seed;
// it is the benchmark's, never the product's (nothing under src/ may import it).
//
// The rules it knows: an amount over 220 is a fraud; a terminal compromised on day D makes
// every transaction there on days [D, D + 28) a fraud, D drawn each day for a share p₂ of the
// terminals; a customer compromised on day D has a third of its transactions on days
// [D, D + 14) multiplied by 5 and made frauds, for a share p₃ of the customers a day; a
// customer's amounts are N(μ, μ/2) (a negative draw redrawn uniform on [0, 2μ]).
//
// What it infers, exactly under those rules up to small approximations (a third taken per
// transaction rather than per compromised window; μ the mean of the customer's legitimate
// amounts known before the test week):
// - the terminal: a hidden Markov chain over the days since its latest compromise began
//   (28 = not compromised), forward from 70 days back through the labels known by then: a
//   known legitimate transaction rules a compromise out, a known fraud not explained by its
//   amount (over 220, or five times the customer's usual) points to one;
// - the customer: the same chain over 14 days, its evidence the amounts of all its earlier
//   transactions (a compromised customer's are five times its usual a third of the time) and
//   the labels known by then;
// - the transaction: 1 over 220, else 1 − (1 − P(terminal compromised))(1 − P(a fraud of the
//   customer's compromise, given this amount)).

import type { SimulatorOptions, Transactions } from "./simulator.ts";

const DAY = 86400;
const TERMINAL_DAYS = 28;
const CUSTOMER_DAYS = 14;
const AMOUNT_FRAUD = 220;
const MULTIPLIER = 5;
const SHARE = 1 / 3;
const TERMINAL_LOOKBACK_DAYS = 70;
const CUSTOMER_LOOKBACK_DAYS = 30;
/** P(a normal draw is negative), μ/2 spread: Φ(−2). */
const REDRAW = 0.02275;

/** Density of a genuine amount of a customer whose mean is `mu`. */
function genuine(a: number, mu: number): number {
  const sigma = mu / 2;
  const z = (a - mu) / sigma;
  const normal = a >= 0 ? Math.exp(-0.5 * z * z) / (sigma * Math.sqrt(2 * Math.PI)) : 0;
  const uniform = a >= 0 && a <= 2 * mu ? REDRAW / (2 * mu) : 0;
  return normal + uniform + 1e-300;
}

/** Density of a compromised customer's fraud amount (five times a genuine one). */
function multiplied(a: number, mu: number): number {
  return genuine(a / MULTIPLIER, mu) / MULTIPLIER;
}

/** Rows of `key` grouped, each group in row (time) order. */
function groups(key: Int32Array, size: number): Int32Array[] {
  const counts = new Int32Array(size);
  for (const k of key) counts[k] = (counts[k] as number) + 1;
  const out = Array.from(counts, (n) => new Int32Array(n));
  const fill = new Int32Array(size);
  key.forEach((k, row) => {
    (out[k] as Int32Array)[fill[k] as number] = row;
    fill[k] = (fill[k] as number) + 1;
  });
  return out;
}

/** Index of the first row in `list` (time order) with seconds ≥ `s`. */
function firstAtOrAfter(tx: Transactions, list: Int32Array, s: number): number {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((tx.seconds[list[mid] as number] as number) < s) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * A forward pass of the "days since the latest compromise began" chain (states 0..span−1
 * compromised, span not), from `fromDay` to `toDay` inclusive; `observe(day, alpha)` multiplies
 * in that day's evidence. Returns P(compromised on `toDay`) after its evidence.
 */
function forward(
  span: number,
  pStart: number,
  fromDay: number,
  toDay: number,
  observe: (day: number, alpha: Float64Array) => void,
): number {
  const alpha = new Float64Array(span + 1);
  // Stationary start: the latest start k days ago with probability p(1−p)^k.
  for (let k = 0; k < span; k++) alpha[k] = pStart * (1 - pStart) ** k;
  alpha[span] = (1 - pStart) ** span;
  for (let day = fromDay; day <= toDay; day++) {
    let total = 0;
    for (const v of alpha) total += v;
    const stay: number = (alpha[span] as number) + (alpha[span - 1] as number);
    for (let k = span - 1; k >= 1; k--) alpha[k] = (alpha[k - 1] as number) * (1 - pStart);
    alpha[span] = stay * (1 - pStart);
    alpha[0] = total * pStart;
    observe(day, alpha);
    let norm = 0;
    for (const v of alpha) norm += v;
    if (norm > 0) for (let k = 0; k <= span; k++) alpha[k] = (alpha[k] as number) / norm;
  }
  let compromised = 0;
  for (let k = 0; k < span; k++) compromised += alpha[k] as number;
  return compromised;
}

/**
 * The oracle's fraud probability for each of `rows`, knowing the labels of transactions at
 * least `labelDelayDays` old at each row's time. `knownBeforeDay`: the customers' usual
 * amounts come from their legitimate transactions before this day (their labels known by
 * every row scored).
 */
export function oracleScores(
  tx: Transactions,
  o: SimulatorOptions,
  rows: Int32Array,
  labelDelayDays: number,
  knownBeforeDay: number,
): Float64Array {
  const pTerminal = o.compromisedTerminalsPerDay / o.terminals;
  const pCustomer = o.compromisedCustomersPerDay / o.customers;
  const byTerminal = groups(tx.terminal, o.terminals);
  const byCustomer = groups(tx.customer, o.customers);
  const sum = new Float64Array(o.customers);
  const count = new Float64Array(o.customers);
  let all = 0;
  let n = 0;
  for (let i = 0; i < tx.count && (tx.day[i] as number) < knownBeforeDay - labelDelayDays; i++) {
    if (tx.fraud[i]) continue;
    const c = tx.customer[i] as number;
    sum[c] = (sum[c] as number) + (tx.amount[i] as number);
    count[c] = (count[c] as number) + 1;
    all += tx.amount[i] as number;
    n++;
  }
  const mu = Float64Array.from(sum, (s, c) => (count[c] ? s / (count[c] as number) : all / n));
  // The customer-compromise prior in steady state, for judging another customer's fraud.
  const steady = 1 - (1 - pCustomer) ** CUSTOMER_DAYS;
  const explainedByCustomer = (i: number): number => {
    const a = tx.amount[i] as number;
    const m = mu[tx.customer[i] as number] as number;
    const f = SHARE * multiplied(a, m);
    return (
      (steady * f) / (steady * (f + (1 - SHARE) * genuine(a, m)) + (1 - steady) * genuine(a, m))
    );
  };

  const out = new Float64Array(rows.length);
  rows.forEach((i, r) => {
    const a = tx.amount[i] as number;
    if (a > AMOUNT_FRAUD) {
      out[r] = 1;
      return;
    }
    const now = tx.seconds[i] as number;
    const day = tx.day[i] as number;
    const knownBy = now - labelDelayDays * DAY;

    const tList = byTerminal[tx.terminal[i] as number] as Int32Array;
    const tFrom = firstAtOrAfter(tx, tList, (day - TERMINAL_LOOKBACK_DAYS) * DAY);
    let tk = tFrom;
    const terminal = forward(
      TERMINAL_DAYS,
      pTerminal,
      day - TERMINAL_LOOKBACK_DAYS,
      day,
      (d, alpha) => {
        for (; tk < tList.length; tk++) {
          const j = tList[tk] as number;
          if ((tx.day[j] as number) > d || (tx.seconds[j] as number) > knownBy) break;
          if ((tx.day[j] as number) < d) continue;
          if ((tx.amount[j] as number) > AMOUNT_FRAUD) continue;
          // Not compromised: a fraud only by the customer's compromise.
          const other = Math.min(0.999, Math.max(1e-4, explainedByCustomer(j)));
          const notCompromised = tx.fraud[j] ? other : 1 - other;
          if (tx.fraud[j]) {
            alpha[TERMINAL_DAYS] = (alpha[TERMINAL_DAYS] as number) * notCompromised;
          } else {
            for (let k = 0; k < TERMINAL_DAYS; k++) alpha[k] = 0;
            alpha[TERMINAL_DAYS] = (alpha[TERMINAL_DAYS] as number) * notCompromised;
          }
        }
      },
    );

    const cList = byCustomer[tx.customer[i] as number] as Int32Array;
    const m = mu[tx.customer[i] as number] as number;
    let ck = firstAtOrAfter(tx, cList, (day - CUSTOMER_LOOKBACK_DAYS) * DAY);
    const customer = forward(
      CUSTOMER_DAYS,
      pCustomer,
      day - CUSTOMER_LOOKBACK_DAYS,
      day,
      (d, alpha) => {
        for (; ck < cList.length; ck++) {
          const j = cList[ck] as number;
          if (j === i || (tx.day[j] as number) > d) break;
          if ((tx.day[j] as number) < d) continue;
          const aj = tx.amount[j] as number;
          const g = genuine(aj, m);
          const f = multiplied(aj, m);
          let covered = SHARE * f + (1 - SHARE) * g;
          let clear = g;
          if ((tx.seconds[j] as number) <= knownBy) {
            // A label: legitimate says "not this third"; a fraud is this third or another cause.
            const other = aj > AMOUNT_FRAUD ? 1 : 0.006;
            covered = tx.fraud[j] ? SHARE * f + (1 - SHARE) * g * other : (1 - SHARE) * g;
            clear = tx.fraud[j] ? g * other : g;
          }
          for (let k = 0; k < CUSTOMER_DAYS; k++) alpha[k] = (alpha[k] as number) * covered;
          alpha[CUSTOMER_DAYS] = (alpha[CUSTOMER_DAYS] as number) * clear;
        }
      },
    );
    const f = SHARE * multiplied(a, m);
    const g = genuine(a, m);
    const byCustomerCompromise =
      (customer * f) / (customer * (f + (1 - SHARE) * g) + (1 - customer) * g);
    out[r] = 1 - (1 - terminal) * (1 - byCustomerCompromise);
  });
  return out;
}
