import { type SQL, sql } from "drizzle-orm";
import { historyHorizonMs } from "../model/features";
import type { TrainingEvent } from "../model/training-set";

// What a training run reads: the org's payments of one mode up to `as_of`, in time order, each
// with the earliest time a fraud (or chargeback) label and a legitimate (or refund) label on it
// became known, counting only labels known by `as_of` (docs/history.md: a label counts from when
// it was known). The window starts far enough back for the features of the first payment
// trained on: the training window and the label delay before `as_of`, and the features'
// horizon (30 days plus the label delay) before that.
//
// Read in pages of `HISTORY_PAGE_ROWS` by (occurred_at, id): a page of numbers and ids is a few
// MiB, inside the SQL-over-HTTP response limit (10 MB), and 100,000 payments are five round
// trips. Agents, payees and currencies are interned to small integers as the pages arrive.

export const HISTORY_PAGE_ROWS = 20_000;

/** The instants a training run reads between, in epoch ms: [from, asOf). */
export interface HistoryWindow {
  livemode: boolean;
  from: number;
  asOf: number;
}

/** The history a model trained as of `asOf` with these spans needs. */
export function historyWindow(
  livemode: boolean,
  asOf: number,
  labelDelayMs: number,
  trainingWindowMs: number,
): HistoryWindow {
  const from = asOf - trainingWindowMs - labelDelayMs - historyHorizonMs({ labelDelayMs });
  return { livemode, from, asOf };
}

/** One payment as the page query answers it (times in epoch ms). */
export interface HistoryRow {
  t: number;
  id: string;
  agent_id: string | null;
  currency: string | null;
  counterparty: string | null;
  amount: number;
  fraud: number | null;
  legit: number | null;
  /** An assessed payment's raw network identifiers (`assessments.network_ids`); null for history. */
  network_ids?: NetworkIdentifiers | null;
}

/** `assessments.network_ids`: what a payment is known by in the network, raw. */
export interface NetworkIdentifiers {
  agent_key: string | null;
  issuer_key: string | null;
  instrument: string | null;
}

/** The raw identifiers the network features of one event are read for (network-read.ts). */
export interface EventIdentifiers extends Partial<NetworkIdentifiers> {
  payee: string | null;
  agent: string | null;
}

const instant = (ms: number) =>
  sql`(timestamptz 'epoch' + ${ms}::float8 * interval '1 millisecond')`;

/**
 * One page of the window's payments after `after` (the previous page's last row), in time
 * order. Payments without an amount (actions that moved no money) are no training rows and
 * are not read. Runs in the org's transaction: row-level security keeps it to the org.
 */
export function historyPage(
  window: HistoryWindow,
  after: Pick<HistoryRow, "t" | "id"> | null,
  limit = HISTORY_PAGE_ROWS,
): SQL {
  return sql`select (extract(epoch from p.occurred_at) * 1000)::float8 as t, p.id,
      p.agent_id, p.currency, p.counterparty, p.amount::float8 as amount,
      (extract(epoch from l.fraud) * 1000)::float8 as fraud,
      (extract(epoch from l.legit) * 1000)::float8 as legit,
      a.network_ids
    from payments p
    left join assessments a on a.org_id = p.org_id and a.id = p.assessment_id
    left join lateral (
      select min(x.known_at) filter (where x.label in ('fraud', 'chargeback')) as fraud,
             min(x.known_at) filter (where x.label in ('legitimate', 'refund')) as legit
      from payment_labels x
      where x.org_id = p.org_id and x.payment_id = p.id and x.known_at <= ${instant(window.asOf)}
    ) l on true
    where p.livemode = ${window.livemode} and p.amount is not null
      and p.occurred_at >= ${instant(window.from)} and p.occurred_at < ${instant(window.asOf)}
      ${after ? sql`and (p.occurred_at, p.id) > (${instant(after.t)}, ${after.id}::uuid)` : sql``}
    order by p.occurred_at, p.id
    limit ${limit}`;
}

/**
 * Builds the trainer's events from pages of rows. The agent of an event is the agent in one
 * currency, as the assess path reads an agent's history (its payments in the request's
 * currency); a payment without an agent or a payee has no history of that side (each is its
 * own), as the assess path reads none for it.
 */
export class HistoryEvents {
  readonly events: TrainingEvent[] = [];
  /** Each event's raw identifiers, for its network features (same index as `events`). */
  readonly identifiers: EventIdentifiers[] = [];
  #agents = new Map<string, number>();
  #payees = new Map<string, number>();
  /** One string per currency, shared by the events (the metrics' amounts per currency). */
  #currencies = new Map<string, string>();
  #loners = 0;

  add(rows: readonly HistoryRow[]): void {
    for (const row of rows) {
      this.events.push({
        time: Number(row.t),
        agent:
          row.agent_id === null
            ? this.#loner()
            : intern(this.#agents, `${row.agent_id}:${row.currency ?? ""}`),
        payee: row.counterparty === null ? this.#loner() : intern(this.#payees, row.counterparty),
        amount: Number(row.amount),
        fraudKnownAt: row.fraud === null ? null : Number(row.fraud),
        labelKnownAt: row.legit === null ? null : Number(row.legit),
        currency: row.currency === null ? null : this.#currency(row.currency),
      });
      this.identifiers.push({
        payee: row.counterparty,
        agent: row.agent_id,
        ...(row.network_ids ?? {}),
      });
    }
  }

  #currency(code: string): string {
    let shared = this.#currencies.get(code);
    if (shared === undefined) {
      shared = code;
      this.#currencies.set(code, code);
    }
    return shared;
  }

  /** A key no other event shares: negative, so never an interned one. */
  #loner(): number {
    this.#loners += 1;
    return -this.#loners;
  }
}

function intern(map: Map<string, number>, key: string): number {
  let id = map.get(key);
  if (id === undefined) {
    id = map.size;
    map.set(key, id);
  }
  return id;
}

/** Reads the whole window page by page through `read` (one round trip each). */
export async function readHistory(
  window: HistoryWindow,
  read: (query: SQL) => Promise<HistoryRow[]>,
  pageRows = HISTORY_PAGE_ROWS,
): Promise<TrainingEvent[]> {
  return (await readHistoryEvents(window, read, pageRows)).events;
}

/** The same, with each event's raw identifiers (for its network features). */
export async function readHistoryEvents(
  window: HistoryWindow,
  read: (query: SQL) => Promise<HistoryRow[]>,
  pageRows = HISTORY_PAGE_ROWS,
): Promise<HistoryEvents> {
  const built = new HistoryEvents();
  let after: HistoryRow | null = null;
  for (;;) {
    const rows = await read(historyPage(window, after, pageRows));
    built.add(rows);
    if (rows.length < pageRows) return built;
    after = rows[rows.length - 1] as HistoryRow;
  }
}
