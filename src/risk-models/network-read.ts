import { sql } from "drizzle-orm";
import type { NetworkCounts } from "../model/features";
import type { TrainingEvent } from "../model/training-set";
import { type NetworkKind, networkDigest, networkK, networkKeys } from "../network/keys";
import type { EventIdentifiers } from "./history-read";

// The network features of a training run (issue 41; docs/risk-model.md, "Network features"):
// for each payment trained on, the counts a request at the start of its UTC day would have
// read (`network_signal_series`, drizzle/0021: the 30 days to the day before it, k applied,
// the org itself left out), under the read key. The day before, not the day itself: the
// series counts a whole day, and a label another org learnt later that day was not known to
// the payment; the assess path reads the same day up to its own time, so it is at most a day
// fresher than what the model learnt from. Zeros when the org's mode does not consume.

/** Digests per statement: an answer stays far below the SQL-over-HTTP response limit. */
export const SERIES_DIGESTS = 1_000;
const DAY_MS = 86_400_000;

/** One `network_signal_series` call: one kind, some digests, a span of UTC days. */
export interface SeriesAsk {
  livemode: boolean;
  k: number;
  keyId: string;
  kind: NetworkKind;
  digests: readonly string[];
  from: string;
  to: string;
}

/** Runs one series call in the org's transaction (`seriesQuery`): its JSON answer, or null. */
export type RunSeries = (ask: SeriesAsk) => Promise<unknown>;

interface SeriesItem {
  digest: string;
  day: string;
  fraud_orgs: number;
  legitimate_orgs: number;
}

const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/**
 * Sets `network` on the events trained on (time in [from, asOf)) from the counts the network
 * held for their payee, agent key(s), issuer key and instrument. An event of imported history
 * has no key of its own: it reads the largest count among its agent's keys (`agentKeys`), as a
 * request by that agent would name one of them (`agentKeys` reads them, once, when needed).
 * Answers whether the org consumed (false: no event was touched) and the statements run.
 */
export async function attachNetworkCounts(
  env: { NETWORK_KEYS?: string; NETWORK_K?: string },
  livemode: boolean,
  events: TrainingEvent[],
  identifiers: readonly EventIdentifiers[],
  window: { from: number; asOf: number },
  agentKeys: () => Promise<ReadonlyMap<string, readonly string[]>>,
  run: RunSeries,
): Promise<{ consumed: boolean; statements: number }> {
  const key = networkKeys(env)?.[0];
  if (!key) return { consumed: false, statements: 0 };
  const targets: number[] = [];
  for (let i = 0; i < events.length; i++) {
    const t = (events[i] as TrainingEvent).time;
    if (t >= window.from && t < window.asOf) targets.push(i);
  }
  if (targets.length === 0) return { consumed: false, statements: 0 };
  const span = { from: dayOf(window.from - DAY_MS), to: dayOf(window.asOf - DAY_MS) };
  let keysOfAgents: ReadonlyMap<string, readonly string[]> = new Map();
  // History has no network identifiers of its own; an assessment without a key has none.
  const isHistory = (ids: EventIdentifiers) => ids.agent_key === undefined && ids.agent !== null;
  const valuesOf = (kind: NetworkKind, ids: EventIdentifiers): readonly string[] => {
    if (kind === "payee") return ids.payee ? [ids.payee] : [];
    if (kind === "issuer") return ids.issuer_key ? [ids.issuer_key] : [];
    if (kind === "instrument") return ids.instrument ? [ids.instrument] : [];
    if (ids.agent_key) return [ids.agent_key];
    return isHistory(ids) ? (keysOfAgents.get(ids.agent as string) ?? []) : [];
  };
  const kinds: NetworkKind[] = ["payee", "agent_key", "issuer", "instrument"];
  const found = new Map<NetworkKind, Map<string, Map<string, SeriesItem>>>();
  let statements = 0;
  for (const kind of kinds) {
    if (
      kind === "agent_key" &&
      targets.some((i) => isHistory(identifiers[i] as EventIdentifiers))
    ) {
      keysOfAgents = await agentKeys();
      statements++;
    }
    const digestOf = new Map<string, string>();
    for (const i of targets) {
      for (const value of valuesOf(kind, identifiers[i] as EventIdentifiers)) {
        if (!digestOf.has(value)) digestOf.set(value, networkDigest(key, kind, value));
      }
    }
    const byDigest = new Map<string, Map<string, SeriesItem>>();
    const digests = [...new Set(digestOf.values())];
    for (let at = 0; at < digests.length; at += SERIES_DIGESTS) {
      const chunk = digests.slice(at, at + SERIES_DIGESTS);
      const answer = await run({
        livemode,
        k: networkK(env),
        keyId: key.kid,
        kind,
        digests: chunk,
        ...span,
      });
      statements++;
      if (!Array.isArray(answer)) return { consumed: false, statements };
      for (const item of answer as SeriesItem[]) {
        const days = byDigest.get(item.digest) ?? new Map<string, SeriesItem>();
        byDigest.set(item.digest, days);
        days.set(item.day, item);
      }
    }
    found.set(
      kind,
      new Map([...digestOf].map(([value, d]) => [value, byDigest.get(d) ?? new Map()])),
    );
  }
  for (const i of targets) {
    const event = events[i] as TrainingEvent;
    const ids = identifiers[i] as EventIdentifiers;
    const day = dayOf(event.time - DAY_MS);
    const read = (kind: NetworkKind, field: "fraud_orgs" | "legitimate_orgs") => {
      let most = 0;
      for (const value of valuesOf(kind, ids)) {
        most = Math.max(most, found.get(kind)?.get(value)?.get(day)?.[field] ?? 0);
      }
      return most;
    };
    const counts: NetworkCounts = {
      payee_fraud_orgs: read("payee", "fraud_orgs"),
      payee_legitimate_orgs: read("payee", "legitimate_orgs"),
      agent_key_fraud_orgs: read("agent_key", "fraud_orgs"),
      agent_key_legitimate_orgs: read("agent_key", "legitimate_orgs"),
      issuer_fraud_orgs: read("issuer", "fraud_orgs"),
      instrument_fraud_orgs: read("instrument", "fraud_orgs"),
    };
    event.network = counts;
  }
  return { consumed: true, statements };
}

/** The statement of one series call, answering one column `series`. */
export function seriesQuery(ask: SeriesAsk) {
  return sql`select network_signal_series(${ask.livemode}, ${ask.k}::int, ${ask.keyId},
    ${ask.kind}, array(select json_array_elements_text(${JSON.stringify(ask.digests)}::json)),
    ${ask.from}::date, ${ask.to}::date) as series`;
}
