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

/**
 * Writes `days` days of payment history before `asOf` into the org's mode, as an import would:
 * `perDay` payments a day over 40 agents and 30 payees, in USD. Frauds are learnable: a few
 * payees are compromised (most of their payments are frauds) and large amounts are often
 * frauds; each fraud's label is known `labelAfterMs` after the payment.
 */
export async function seedHistory(
  orgId: string,
  livemode: boolean,
  options: { asOf: number; days?: number; perDay?: number; seed?: number; labelAfterMs?: number },
): Promise<SeededHistory> {
  const { asOf, days = 30, perDay = 60, seed = 1, labelAfterMs = 2 * DAY_MS } = options;
  const next = random(seed);
  const agents = Array.from({ length: 40 }, () => crypto.randomUUID());
  const ids: string[] = [];
  const agentIds: string[] = [];
  const payees: string[] = [];
  const amounts: number[] = [];
  const times: string[] = [];
  const labelIds: string[] = [];
  const labelPayments: string[] = [];
  const knownAt: string[] = [];
  const total = days * perDay;
  for (let i = 0; i < total; i++) {
    const id = crypto.randomUUID();
    const time = asOf - days * DAY_MS + Math.floor(next() * days * DAY_MS);
    const payee = Math.floor(next() * 30);
    const large = next() < 0.08;
    const amount = large ? 40_000 + Math.floor(next() * 60_000) : 500 + Math.floor(next() * 9_500);
    const fraud = (payee < 3 && next() < 0.7) || (large && next() < 0.6) || next() < 0.01;
    ids.push(id);
    agentIds.push(agents[Math.floor(next() * agents.length)] as string);
    payees.push(`payee-${seed}-${payee}`);
    amounts.push(amount);
    times.push(new Date(time).toISOString());
    if (fraud) {
      labelIds.push(crypto.randomUUID());
      labelPayments.push(id);
      knownAt.push(new Date(time + labelAfterMs).toISOString());
    }
  }
  await ownerSql`insert into payments (id, org_id, livemode, external_id, agent_id, kind,
      counterparty, amount, currency, occurred_at)
    select p.id, ${orgId}, ${livemode}, p.id::text, p.agent, 'payment', p.payee, p.amount, 'USD',
      p.at
    from unnest(${ids}::uuid[], ${agentIds}::uuid[], ${payees}::text[], ${amounts}::bigint[],
                ${times}::timestamptz[]) as p(id, agent, payee, amount, at)`;
  await ownerSql`insert into payment_labels (id, org_id, payment_id, livemode, label, known_at,
      source)
    select l.id, ${orgId}, l.payment, ${livemode}, 'fraud', l.known, 'import'
    from unnest(${labelIds}::uuid[], ${labelPayments}::uuid[], ${knownAt}::timestamptz[])
      as l(id, payment, known)`;
  return { payments: total, frauds: labelIds.length };
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
