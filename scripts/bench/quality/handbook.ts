// The Handbook's protocol around the simulated data: its train/test split
// (`get_train_test_set`) and its 15 baseline features (chapter 3, "Baseline feature
// transformation"), reproduced to compare the service's own features and trainer with the
// Handbook's published rows on the same split.

import { numpyArgsort } from "./numpy-sort.ts";
import type { Transactions } from "./simulator.ts";

const DAY = 86400;

export interface Split {
  train: Int32Array;
  test: Int32Array;
}

/**
 * `get_train_test_set(start, delta_train=7, delta_delay=7, delta_test=7)`: a training week,
 * a week's delay, a test week; a test day leaves out every customer with a fraud known by
 * then (in the training week, or on the days up to the day before the delay's end).
 */
export function handbookSplit(
  tx: Transactions,
  startDay = 115,
  train = 7,
  delay = 7,
  test = 7,
): Split {
  const trainRows: number[] = [];
  const known = new Set<number>();
  for (let i = 0; i < tx.count; i++) {
    const d = tx.day[i] as number;
    if (d >= startDay && d < startDay + train) {
      trainRows.push(i);
      if (tx.fraud[i]) known.add(tx.customer[i] as number);
    }
  }
  const testRows: number[] = [];
  for (let k = 0; k < test; k++) {
    const knownDay = startDay + train + k - 1;
    const testDay = startDay + train + delay + k;
    for (let i = 0; i < tx.count; i++) {
      if (tx.day[i] === knownDay && tx.fraud[i]) known.add(tx.customer[i] as number);
    }
    for (let i = 0; i < tx.count; i++) {
      if (tx.day[i] === testDay && !known.has(tx.customer[i] as number)) testRows.push(i);
    }
  }
  testRows.sort((a, b) => a - b);
  return { train: Int32Array.from(trainRows), test: Int32Array.from(testRows) };
}

export const HANDBOOK_FEATURES = [
  "TX_AMOUNT",
  "TX_DURING_WEEKEND",
  "TX_DURING_NIGHT",
  "CUSTOMER_ID_NB_TX_1DAY_WINDOW",
  "CUSTOMER_ID_AVG_AMOUNT_1DAY_WINDOW",
  "CUSTOMER_ID_NB_TX_7DAY_WINDOW",
  "CUSTOMER_ID_AVG_AMOUNT_7DAY_WINDOW",
  "CUSTOMER_ID_NB_TX_30DAY_WINDOW",
  "CUSTOMER_ID_AVG_AMOUNT_30DAY_WINDOW",
  "TERMINAL_ID_NB_TX_1DAY_WINDOW",
  "TERMINAL_ID_RISK_1DAY_WINDOW",
  "TERMINAL_ID_NB_TX_7DAY_WINDOW",
  "TERMINAL_ID_RISK_7DAY_WINDOW",
  "TERMINAL_ID_NB_TX_30DAY_WINDOW",
  "TERMINAL_ID_RISK_30DAY_WINDOW",
] as const;

/**
 * Row indices per key, each group in the order pandas gives it: the group's rows (in id
 * order) sorted by time with numpy's unstable quicksort, which decides which of two
 * same-second transactions a rolling window counts first.
 */
function groupByKey(tx: Transactions, key: Int32Array): number[][] {
  const groups = new Map<number, number[]>();
  key.forEach((k, i) => {
    const g = groups.get(k);
    if (g) g.push(i);
    else groups.set(k, [i]);
  });
  return [...groups.values()].map((rows) =>
    Array.from(numpyArgsort(rows.map((i) => tx.seconds[i] as number)), (k) => rows[k] as number),
  );
}

/**
 * The Handbook's 15 features for `rows`, row-major. Time windows are pandas' rolling('Nd'):
 * the rows in (t − N days, t], the row itself included. The terminal's risk is over
 * (t − (7 + N) days, t − 7 days], 0 when that window is empty. Labels are the true ones,
 * as the Handbook uses them (its 7-day delay stands in for when labels are known).
 */
export function handbookFeatures(tx: Transactions, rows: Int32Array): Float64Array {
  const width = HANDBOOK_FEATURES.length;
  const out = new Float64Array(rows.length * width);
  const wanted = new Map<number, number>();
  rows.forEach((i, r) => {
    wanted.set(i, r);
  });
  const start = Date.UTC(2018, 3, 1);
  for (const [i, r] of wanted) {
    const date = new Date(start + (tx.seconds[i] as number) * 1000);
    out[r * width] = tx.amount[i] as number;
    out[r * width + 1] = date.getUTCDay() === 0 || date.getUTCDay() === 6 ? 1 : 0;
    out[r * width + 2] = date.getUTCHours() <= 6 ? 1 : 0;
  }
  for (const list of groupByKey(tx, tx.customer)) {
    list.forEach((i, p) => {
      const r = wanted.get(i);
      if (r === undefined) return;
      const t = tx.seconds[i] as number;
      [1, 7, 30].forEach((w, k) => {
        let n = 0;
        let sum = 0;
        for (let q = p; q >= 0 && (tx.seconds[list[q] as number] as number) > t - w * DAY; q--) {
          n++;
          sum += tx.amount[list[q] as number] as number;
        }
        out[r * width + 3 + 2 * k] = n;
        out[r * width + 4 + 2 * k] = sum / n;
      });
    });
  }
  for (const list of groupByKey(tx, tx.terminal)) {
    list.forEach((i, p) => {
      const r = wanted.get(i);
      if (r === undefined) return;
      const t = tx.seconds[i] as number;
      [1, 7, 30].forEach((w, k) => {
        let n = 0;
        let frauds = 0;
        for (let q = p; q >= 0; q--) {
          const s = tx.seconds[list[q] as number] as number;
          if (s <= t - (7 + w) * DAY) break;
          if (s <= t - 7 * DAY) {
            n++;
            frauds += tx.fraud[list[q] as number] as number;
          }
        }
        out[r * width + 9 + 2 * k] = n;
        out[r * width + 10 + 2 * k] = n ? frauds / n : 0;
      });
    });
  }
  return out;
}
