import { type HistoryOptions, historyRecords } from "../../support/payment-history";
import { call, type TestOrg } from "./api";
import { ownerSql } from "./db";
import { eventually } from "./webhooks";

export interface SeededHistory {
  payments: number;
  frauds: number;
}

/**
 * Writes a generated history (`historyRecords`, 40 made-up agents) into the org's mode
 * directly, as rows of `payments` and `payment_labels`, each under an external id of its own
 * (an org may be seeded more than once with one seed).
 */
export async function seedHistory(
  orgId: string,
  livemode: boolean,
  options: Omit<HistoryOptions, "label">,
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
