import { call, type TestOrg } from "./api";
import { ownerSql } from "./db";
import { eventually } from "./webhooks";

const DAY_MS = 86_400_000;

/** A small deterministic generator (mulberry32): the same seed, the same history. */
function random(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

export interface SeededHistory {
  payments: number;
  frauds: number;
}

/** One payment of a generated history, as `POST /v1/history/transactions` takes a record. */
export interface HistoryRecord {
  id: string;
  occurred_at: string;
  agent_id: string;
  payee: { id: string };
  amount: { amount: number; currency: "USD" };
  label?: { label: "fraud"; labeled_at: string };
}

/**
 * `days` days of payments before `asOf`, `perDay` a day over the given agents and 30 payees,
 * in USD. Frauds are learnable: a few payees are compromised (most of their payments are
 * frauds) and large amounts are often frauds; each fraud's label is known `labelAfterMs` after
 * the payment. The same seed gives the same history.
 */
export function historyRecords(
  agents: readonly string[],
  options: { asOf: number; days?: number; perDay?: number; seed?: number; labelAfterMs?: number },
): HistoryRecord[] {
  const { asOf, days = 30, perDay = 60, seed = 1, labelAfterMs = 2 * DAY_MS } = options;
  const next = random(seed);
  const records: HistoryRecord[] = [];
  for (let i = 0; i < days * perDay; i++) {
    const time = asOf - days * DAY_MS + Math.floor(next() * days * DAY_MS);
    const payee = Math.floor(next() * 30);
    const large = next() < 0.08;
    const amount = large ? 40_000 + Math.floor(next() * 60_000) : 500 + Math.floor(next() * 9_500);
    const fraud = (payee < 3 && next() < 0.7) || (large && next() < 0.6) || next() < 0.01;
    records.push({
      id: `txn-${seed}-${i}`,
      occurred_at: new Date(time).toISOString(),
      agent_id: agents[Math.floor(next() * agents.length)] as string,
      payee: { id: `payee-${seed}-${payee}` },
      amount: { amount, currency: "USD" },
      ...(fraud
        ? { label: { label: "fraud", labeled_at: new Date(time + labelAfterMs).toISOString() } }
        : {}),
    });
  }
  return records;
}

/**
 * Writes a generated history (`historyRecords`, 40 made-up agents) into the org's mode
 * directly, as rows of `payments` and `payment_labels`, each under an external id of its own
 * (an org may be seeded more than once with one seed).
 */
export async function seedHistory(
  orgId: string,
  livemode: boolean,
  options: { asOf: number; days?: number; perDay?: number; seed?: number; labelAfterMs?: number },
): Promise<SeededHistory> {
  const agents = Array.from({ length: 40 }, () => crypto.randomUUID());
  const records = historyRecords(agents, options);
  const ids = records.map(() => crypto.randomUUID());
  const labelled = records.flatMap((r, i) => (r.label ? [{ id: ids[i] as string, r }] : []));
  await ownerSql`insert into payments (id, org_id, livemode, external_id, agent_id, kind,
      counterparty, amount, currency, occurred_at)
    select p.id, ${orgId}, ${livemode}, p.id::text, p.agent, 'payment', p.payee, p.amount, 'USD',
      p.at
    from unnest(${ids}::uuid[],
                ${records.map((r) => r.agent_id)}::uuid[], ${records.map((r) => r.payee.id)}::text[],
                ${records.map((r) => r.amount.amount)}::bigint[],
                ${records.map((r) => r.occurred_at)}::timestamptz[])
      as p(id, agent, payee, amount, at)`;
  await ownerSql`insert into payment_labels (id, org_id, payment_id, livemode, label, known_at,
      source)
    select gen_random_uuid(), ${orgId}, l.payment, ${livemode}, 'fraud', l.known, 'import'
    from unnest(${labelled.map((l) => l.id)}::uuid[],
                ${labelled.map((l) => l.r.label?.labeled_at as string)}::timestamptz[])
      as l(payment, known)`;
  return { payments: records.length, frauds: labelled.length };
}

/** The training the suite asks for: a label delay and window its 30-day histories fill. */
export const TRAINING = { label_delay: 3 * 86_400, training_window: 14 * 86_400 };

type Credential = { key: string } | { token: string };

/** Starts training and waits until the consumer has settled the model. */
export async function trainModel(credential: Credential, body: Record<string, unknown> = {}) {
  const created = await call("/v1/risk-models", {
    method: "POST",
    ...credential,
    body: { ...TRAINING, ...body },
  });
  if (created.status !== 202) {
    throw new Error(`training request failed: ${created.status} ${created.text}`);
  }
  return settled(credential, created.json.id);
}

/** Polls the model until it has left `training`. */
export function settled(credential: Credential, id: string) {
  return eventually(
    async () => {
      const res = await call(`/v1/risk-models/${id}`, credential);
      return res.json.status === "training" ? undefined : res.json;
    },
    30_000,
    `model ${id} to finish training`,
  );
}

/** The ledger entries about one subject, in order. */
export function entriesOf(orgId: string, subjectId: string) {
  return ownerSql`select type, actor_type, actor_id from audit_entries
    where org_id = ${orgId} and subject_id = ${subjectId} order by sequence`;
}

export type { TestOrg };
