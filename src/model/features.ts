// The risk model's features: what a payment looks like against its agent's recent payments and
// its payee's recent payments and known frauds. Generic by construction: calendar windows of
// 1, 7 and 30 days, ratios to the agent's own usual, and payee fraud rates that count a label
// only from the moment it was known. Nothing here knows how any data set was generated.
//
// Computing them at assess time. Every feature is a function of three things the assessment
// already reads in its one context round trip: the payment itself; the agent's payments of the
// last 30 days (time, amount, payee); and the payee's payments of the last 30 days plus the
// label delay, each with the time its fraud label became known (or none). `paymentFeatures`
// takes exactly that, so the assess path calls it with its context rows and a training job
// calls it (through `featureTable`) on the org's history; both see the same numbers for the
// same payment, because neither looks at anything after the payment's time, and a label whose
// `fraudKnownAt` is later than that time does not exist yet. Each window is a count, a sum
// or a sum of squares over rows in a time range (and one median), so SQL could return those
// aggregates instead of the rows if the lists grow long.

const DAY_MS = 86_400_000;
const WINDOWS = [1, 7, 30] as const;
const HISTORY_DAYS = 30;
const RECENT_PAYMENTS = 5;

export interface FeatureOptions {
  /** How long after a payment its fraud label is usually known (the payee risk windows end then). */
  labelDelayMs: number;
  /** The org's offset from UTC for weekend and night (minutes; 0 by default). */
  utcOffsetMinutes?: number;
}

/** A payment being scored, or one in history. */
export interface Payment {
  /** Epoch milliseconds. */
  time: number;
  amount: number;
  payee: string | number;
}

/** One of the payee's earlier payments and, if it was a fraud, when that became known. */
export interface PayeePayment {
  time: number;
  /** Epoch ms the fraud (or chargeback) label was known; null if none is known. */
  fraudKnownAt: number | null;
}

/**
 * The network's counts a payment reads (issue 41; `outcome.network`): other organizations that
 * confirmed fraud on, or a legitimate payment to, its payee, its agent key, the issuer key of
 * its credential and its payment instrument in the 30 days to it. Zeros when the org does not
 * consume network signals, or the payment carries no such identifier.
 */
export interface NetworkCounts {
  payee_fraud_orgs: number;
  payee_legitimate_orgs: number;
  agent_key_fraud_orgs: number;
  agent_key_legitimate_orgs: number;
  issuer_fraud_orgs: number;
  instrument_fraud_orgs: number;
}

/** The network counts, in the order FEATURE_NAMES has them from NETWORK_FEATURES_FROM on. */
export const NETWORK_COUNTS = [
  "payee_fraud_orgs",
  "payee_legitimate_orgs",
  "agent_key_fraud_orgs",
  "agent_key_legitimate_orgs",
  "issuer_fraud_orgs",
  "instrument_fraud_orgs",
] as const satisfies readonly (keyof NetworkCounts)[];

/**
 * The inputs of every model, in the order its trees index them. Append only: a stored model
 * keeps its `width` (the features it was trained on, a prefix of this list) and reads only
 * those, so a model trained before a feature was added keeps scoring exactly as it did.
 */
export const FEATURE_NAMES = [
  "amount",
  "weekend",
  "night",
  "agent_count_1d",
  "agent_mean_amount_1d",
  "agent_count_7d",
  "agent_mean_amount_7d",
  "agent_count_30d",
  "agent_mean_amount_30d",
  "agent_amount_ratio_30d",
  "agent_amount_z_30d",
  "agent_amount_ratio_1d",
  "payee_new_for_agent",
  "payee_count_1d",
  "payee_risk_1d",
  "payee_count_7d",
  "payee_risk_7d",
  "payee_count_30d",
  "payee_risk_30d",
  "payee_known_frauds",
  "payee_days_since_known_fraud",
  "payee_days_since_first_known_fraud",
  "payee_recent_fraud_share",
  "agent_amount_ratio_median_30d",
  "agent_max_ratio_median_7d",
  "payee_clean_since_known_fraud",
  "payee_fraud_run_days",
  "payee_clean_before_run_days",
  "payee_fraud_share_since_first",
  // Issue 41: the network's counts (NETWORK_COUNTS), from index NETWORK_FEATURES_FROM.
  "network_payee_fraud_orgs",
  "network_payee_legitimate_orgs",
  "network_agent_key_fraud_orgs",
  "network_agent_key_legitimate_orgs",
  "network_issuer_fraud_orgs",
  "network_instrument_fraud_orgs",
] as const;
export type FeatureName = (typeof FEATURE_NAMES)[number];

/** Where the network's counts start in FEATURE_NAMES: a model of this width or less ignores them. */
export const NETWORK_FEATURES_FROM = FEATURE_NAMES.indexOf("network_payee_fraud_orgs");

/** The longest history `paymentFeatures` reads before the payment's time (ms). */
export function historyHorizonMs(options: FeatureOptions): number {
  return HISTORY_DAYS * DAY_MS + options.labelDelayMs;
}

/**
 * The feature vector of `payment` (in `FEATURE_NAMES` order). `agentPast` holds the agent's
 * earlier payments and `payeePast` the payee's, both in time order and all before the payment;
 * rows older than the windows are ignored, so a caller may pass longer lists. The agent windows
 * count the payment itself (the Handbook's convention); the ratios compare it with the past only.
 * `network` is what the network answered for the payment (zeros without it).
 */
export function paymentFeatures(
  payment: Payment,
  agentPast: readonly Payment[],
  payeePast: readonly PayeePayment[],
  options: FeatureOptions,
  network?: NetworkCounts | null,
): Float64Array {
  const now = payment.time;
  const out = new Float64Array(FEATURE_NAMES.length);
  const local = new Date(now + (options.utcOffsetMinutes ?? 0) * 60_000);
  const weekday = local.getUTCDay();
  out[0] = payment.amount;
  out[1] = weekday === 0 || weekday === 6 ? 1 : 0;
  out[2] = local.getUTCHours() <= 6 ? 1 : 0;

  // Agent windows: counts, sums and squares of the past, newest first, until 30 days back.
  const count = [0, 0, 0];
  const sum = [0, 0, 0];
  let squares30 = 0;
  let payeeSeen = false;
  const amounts30: number[] = [];
  let max7 = 0;
  for (let i = agentPast.length - 1; i >= 0; i--) {
    const p = agentPast[i] as Payment;
    const age = now - p.time;
    if (age >= HISTORY_DAYS * DAY_MS) break;
    for (let w = 0; w < WINDOWS.length; w++) {
      if (age < (WINDOWS[w] as number) * DAY_MS) {
        count[w] = (count[w] as number) + 1;
        sum[w] = (sum[w] as number) + p.amount;
      }
    }
    squares30 += p.amount * p.amount;
    amounts30.push(p.amount);
    if (age < 7 * DAY_MS) max7 = Math.max(max7, p.amount);
    if (p.payee === payment.payee) payeeSeen = true;
  }
  for (let w = 0; w < WINDOWS.length; w++) {
    const n = (count[w] as number) + 1;
    out[3 + 2 * w] = n;
    out[4 + 2 * w] = ((sum[w] as number) + payment.amount) / n;
  }
  const past30 = count[2] as number;
  const mean30 = past30 > 0 ? (sum[2] as number) / past30 : payment.amount;
  const variance = past30 > 1 ? Math.max(0, squares30 / past30 - mean30 * mean30) : 0;
  // The spread never counts below a tenth of the mean: one steady agent is not infinitely sure.
  const spread = Math.max(Math.sqrt(variance), 0.1 * mean30, 1e-9);
  out[9] = mean30 > 0 ? payment.amount / mean30 : 1;
  out[10] = past30 > 1 ? (payment.amount - mean30) / spread : 0;
  const past1 = count[0] as number;
  out[11] = past1 > 0 && sum[0] ? payment.amount / ((sum[0] as number) / past1) : 1;
  out[12] = payeeSeen ? 0 : 1;

  // Payee windows: recent volume now; fraud rates over the windows that end one label delay
  // ago (their labels have had time to arrive), counting only labels known by now.
  const delay = options.labelDelayMs;
  const volume = [0, 0, 0];
  const mature = [0, 0, 0];
  const frauds = [0, 0, 0];
  let knownFrauds = 0;
  let lastKnownFraud = Number.NEGATIVE_INFINITY;
  let firstKnownFraud = Number.POSITIVE_INFINITY;
  // The share of frauds among the payee's latest payments old enough to be labelled.
  let recentMature = 0;
  let recentFrauds = 0;
  // Labelled payments without a fraud since the latest known one: how a compromise is seen to end.
  let cleanSinceFraud = 0;
  // The latest run of labelled payments that were all frauds: when it began, at the latest
  // (its oldest fraud) and at the earliest (the clean payment just before it).
  let runState = 0; // 0 before the run, 1 in it, 2 past it
  let runStart = Number.NaN;
  let cleanBeforeRun = Number.NaN;
  // Labelled payments counted back to the earliest known fraud among them, and their frauds:
  // a compromised payee's are nearly all frauds, a payee with one stolen card's nearly none.
  let labelled = 0;
  let labelledAtFirstFraud = 0;
  let labelledFrauds = 0;
  for (let i = payeePast.length - 1; i >= 0; i--) {
    const p = payeePast[i] as PayeePayment;
    const age = now - p.time;
    if (age >= HISTORY_DAYS * DAY_MS + delay) break;
    const known = p.fraudKnownAt !== null && p.fraudKnownAt <= now;
    if (known) {
      knownFrauds++;
      lastKnownFraud = Math.max(lastKnownFraud, p.time);
      firstKnownFraud = Math.min(firstKnownFraud, p.time);
    }
    if (knownFrauds === 0 && age >= delay) cleanSinceFraud++;
    if (age >= delay) {
      labelled++;
      if (known) {
        labelledFrauds++;
        labelledAtFirstFraud = labelled;
      }
    }
    if (age >= delay && runState < 2) {
      if (known) {
        runState = 1;
        runStart = age;
      } else if (runState === 1) {
        runState = 2;
        cleanBeforeRun = age;
      }
    }
    if (age >= delay && recentMature < RECENT_PAYMENTS) {
      recentMature++;
      if (known) recentFrauds++;
    }
    for (let w = 0; w < WINDOWS.length; w++) {
      const span = (WINDOWS[w] as number) * DAY_MS;
      if (age < span) volume[w] = (volume[w] as number) + 1;
      if (age >= delay && age < delay + span) {
        mature[w] = (mature[w] as number) + 1;
        if (known) frauds[w] = (frauds[w] as number) + 1;
      }
    }
  }
  for (let w = 0; w < WINDOWS.length; w++) {
    out[13 + 2 * w] = volume[w] as number;
    out[14 + 2 * w] = mature[w] ? (frauds[w] as number) / (mature[w] as number) : 0;
  }
  out[19] = knownFrauds;
  const horizonDays = (HISTORY_DAYS * DAY_MS + delay) / DAY_MS;
  out[20] = knownFrauds > 0 ? (now - lastKnownFraud) / DAY_MS : horizonDays;
  out[21] = knownFrauds > 0 ? (now - firstKnownFraud) / DAY_MS : horizonDays;
  out[22] = recentMature ? recentFrauds / recentMature : 0;
  const usual = median(amounts30, payment.amount);
  out[23] = payment.amount / usual;
  // The agent's largest recent payment against its usual: one unusual payment is seldom alone.
  out[24] = max7 / usual;
  out[25] = knownFrauds > 0 ? cleanSinceFraud : -1;
  out[26] = Number.isNaN(runStart) ? horizonDays : runStart / DAY_MS;
  out[27] = Number.isNaN(cleanBeforeRun) ? horizonDays : cleanBeforeRun / DAY_MS;
  out[28] = labelledAtFirstFraud ? labelledFrauds / labelledAtFirstFraud : 0;
  if (network) {
    for (let n = 0; n < NETWORK_COUNTS.length; n++) {
      out[NETWORK_FEATURES_FROM + n] = network[NETWORK_COUNTS[n] as keyof NetworkCounts];
    }
  }
  return out;
}

/** The median of `values` (reordered), or `fallback` when empty or zero. */
function median(values: number[], fallback: number): number {
  if (values.length === 0) return fallback || 1;
  values.sort((a, b) => a - b);
  const mid = values.length >> 1;
  const m =
    values.length % 2
      ? (values[mid] as number)
      : ((values[mid - 1] as number) + (values[mid] as number)) / 2;
  return m || fallback || 1;
}

/** One event of an org's history, as a training job or a benchmark reads it. */
export interface HistoryEvent extends Payment {
  agent: string | number;
  fraudKnownAt: number | null;
  /** What the network would have answered for it (src/risk-models/network-read.ts); absent: zeros. */
  network?: NetworkCounts | null;
}

/**
 * Features for the events at `targets` (indices into `events`, which must be in time order),
 * each computed from the events before it exactly as the assess path would have seen them.
 * Returns one row per target, row-major in a single Float64Array.
 */
export function featureTable(
  events: readonly HistoryEvent[],
  targets: ArrayLike<number>,
  options: FeatureOptions,
): Float64Array {
  const width = FEATURE_NAMES.length;
  const out = new Float64Array(targets.length * width);
  const wanted = new Uint8Array(events.length);
  let last = -1;
  for (let t = 0; t < targets.length; t++) {
    const i = targets[t] as number;
    wanted[i] = 1;
    last = Math.max(last, i);
  }
  const rowOf = new Map<number, number[]>();
  for (let t = 0; t < targets.length; t++) {
    const i = targets[t] as number;
    const list = rowOf.get(i);
    if (list) list.push(t);
    else rowOf.set(i, [t]);
  }
  const byAgent = new Map<string | number, Payment[]>();
  const byPayee = new Map<string | number, PayeePayment[]>();
  const horizon = historyHorizonMs(options);
  for (let i = 0; i <= last; i++) {
    const e = events[i] as HistoryEvent;
    const agentPast = byAgent.get(e.agent) ?? [];
    if (agentPast.length === 0) byAgent.set(e.agent, agentPast);
    const payeePast = byPayee.get(e.payee) ?? [];
    if (payeePast.length === 0) byPayee.set(e.payee, payeePast);
    if (wanted[i]) {
      const row = paymentFeatures(
        e,
        recent(agentPast, e.time - horizon),
        recent(payeePast, e.time - horizon),
        options,
        e.network,
      );
      for (const t of rowOf.get(i) ?? []) out.set(row, t * width);
    }
    agentPast.push({ time: e.time, amount: e.amount, payee: e.payee });
    payeePast.push({ time: e.time, fraudKnownAt: e.fraudKnownAt });
  }
  return out;
}

/** Drops rows older than `since` from the front once they are a good share of the list. */
function recent<T extends { time: number }>(list: T[], since: number): T[] {
  let k = 0;
  while (k < list.length && (list[k] as T).time < since) k++;
  if (k > 64 && k * 2 > list.length) list.splice(0, k);
  return list;
}
