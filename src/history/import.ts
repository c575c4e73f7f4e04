import type { z } from "@hono/zod-openapi";
import { sql } from "drizzle-orm";
import type { Tenant } from "../auth/tenant";
import type { Database } from "../db/client";
import { listById, mapPage, type Page } from "../db/pagination";
import { historyImports } from "../db/schema";
import { ApiError } from "../errors";
import { commit } from "../ledger/commit";
import { newId } from "../lib/ids";
import { contributes, contributesQuery, nudge } from "../network/queue";
import { type HistoryImport, MAX_HISTORY_RECORDS } from "../schemas/history";
import { HISTORY_LABELS, type HistoryLabel } from "../schemas/vocabulary";
import {
  checkRecords,
  counterpartyOf,
  type RecordError,
  recordsDigest,
  type StoredRecord,
  sameRecord,
} from "./records";

// POST /v1/history/transactions and GET /v1/history/imports apart from HTTP (docs/history.md):
// an org's past payments become rows of `payments`, the one history every window, velocity and
// payee statistic of the assess path reads, and every training set.

export type HistoryImportRow = typeof historyImports.$inferSelect;
type HistoryImportView = z.infer<typeof HistoryImport>;

/** How many times an import that lost a race on one of its ids is tried again. */
const RACE_RETRIES = 1;

export function toHistoryImport(row: HistoryImportRow): HistoryImportView {
  const labels = row.labels as Record<HistoryLabel, number>;
  return {
    id: row.id,
    object: "history_import",
    livemode: row.livemode,
    created: row.createdAt.toISOString(),
    records: row.records,
    inserted: row.inserted,
    unchanged: row.records - row.inserted,
    labels: Object.fromEntries(
      HISTORY_LABELS.map((label) => [label, labels[label] ?? 0]),
    ) as HistoryImportView["labels"],
    first_occurred_at: row.firstOccurredAt?.toISOString() ?? null,
    last_occurred_at: row.lastOccurredAt?.toISOString() ?? null,
    digest: row.digest,
    audit_entry_id: row.auditEntryId,
  };
}

/** The top of a call's body: 1 to 10,000 records, or a 400 that says so. */
export function checkCount(count: number): void {
  if (count >= 1 && count <= MAX_HISTORY_RECORDS) return;
  throw new ApiError("invalid_request", [
    {
      path: "records",
      message:
        count === 0
          ? "must hold at least 1 record"
          : `must hold at most ${MAX_HISTORY_RECORDS} records (send more in further calls)`,
      code: count === 0 ? "too_small" : "too_big",
    },
  ]);
}

function invalid(errors: RecordError[]): ApiError {
  return new ApiError("invalid_request", errors);
}

/**
 * Imports a call's records into the caller's mode: every record is checked (schema, clock,
 * repeated ids, the org's agents) and any fault is a 400 naming every bad record, with nothing
 * stored; a record whose id is stored with other content is a 409 naming each; records stored
 * with the same content are counted as unchanged. The rest are written with their labels, the
 * import's row and its one `history.imported` ledger entry in one transaction.
 */
export async function importHistory(
  tenant: Tenant,
  items: readonly unknown[],
): Promise<HistoryImportView> {
  checkCount(items.length);
  const now = Date.now();
  const { records, errors } = checkRecords(items, now);
  if (errors.length > 0) throw invalid(errors);
  for (let attempt = 0; ; attempt++) {
    try {
      return await store(tenant, records, now);
    } catch (error) {
      if (!isExternalIdRace(error) || attempt >= RACE_RETRIES) throw raced(error);
    }
  }
}

/** What the database holds of a call's agents and ids, in one round trip. */
async function readKnown(tenant: Tenant, records: readonly StoredRecord[]) {
  const agentIds = JSON.stringify([...new Set(records.map((r) => r.agent_id))]);
  const ids = JSON.stringify(records.map((r) => r.id));
  const [agents, stored] = await tenant.batch((db) => [
    db.execute(sql`select a.id from agents a
      where a.id in (select value::uuid from jsonb_array_elements_text(${agentIds}::jsonb))`),
    db.execute(sql`select p.external_id, p.record from payments p
      where p.livemode = ${tenant.livemode} and p.external_id is not null
        and p.external_id in (select value from jsonb_array_elements_text(${ids}::jsonb))`),
  ]);
  const agentRows = (agents as unknown as { rows: { id: string }[] }).rows;
  const storedRows = (stored as unknown as { rows: { external_id: string; record: unknown }[] })
    .rows;
  return {
    agents: new Set(agentRows.map((row) => row.id)),
    stored: new Map(storedRows.map((row) => [row.external_id, parsed(row.record)])),
  };
}

/** jsonb as the driver answers it: parsed already, or (over some transports) its text. */
function parsed(value: unknown): unknown {
  return typeof value === "string" ? JSON.parse(value) : value;
}

async function store(
  tenant: Tenant,
  records: readonly StoredRecord[],
  now: number,
): Promise<HistoryImportView> {
  const known = await readKnown(tenant, records);
  const unknownAgents: RecordError[] = [];
  const conflicts: RecordError[] = [];
  const fresh: StoredRecord[] = [];
  records.forEach((record, index) => {
    if (!known.agents.has(record.agent_id)) {
      unknownAgents.push({
        index,
        id: record.id,
        path: `records.${index}.agent_id`,
        message: "names no agent of this organization",
        code: "unknown_agent",
      });
    }
    const stored = known.stored.get(record.id);
    if (stored === undefined) fresh.push(record);
    else if (!sameRecord(stored, record)) {
      conflicts.push({
        index,
        id: record.id,
        path: `records.${index}`,
        message: "this id is stored with other content: a stored record never changes",
        code: "conflict",
      });
    }
  });
  if (unknownAgents.length > 0) throw invalid(unknownAgents);
  if (conflicts.length > 0) throw new ApiError("history_record_conflict", conflicts);

  const who = await tenant.caller();
  const id = newId(now);
  const labels = Object.fromEntries(HISTORY_LABELS.map((label) => [label, 0])) as Record<
    HistoryLabel,
    number
  >;
  for (const record of fresh) if (record.label) labels[record.label.label] += 1;
  const times = records.map((r) => Date.parse(r.occurred_at));
  const row: HistoryImportRow = {
    id,
    orgId: who.orgId,
    livemode: tenant.livemode,
    records: records.length,
    inserted: fresh.length,
    labels,
    firstOccurredAt: new Date(times.reduce((a, b) => Math.min(a, b))),
    lastOccurredAt: new Date(times.reduce((a, b) => Math.max(a, b))),
    digest: recordsDigest(records),
    auditEntryId: null,
    createdAt: new Date(now),
  };
  const { audit_entry_id: _, ...payload } = toHistoryImport(row);
  const { entry, results } = await commit(
    tenant,
    {
      type: "history.imported",
      subject: { type: "history_import", id },
      payload,
      // Kept a day with the entry: the import's summary, never its records.
      terms: { id },
    },
    // Last: whether the org contributes this mode to the network (docs/network.md).
    (db, { entry }) => [
      ...writes(db, { ...row, auditEntryId: entry.id }, fresh),
      contributesQuery(db, row.livemode),
    ],
  );
  if (fresh.length > 0 && contributes(results.at(-1))) {
    nudge(tenant.env, (work) => tenant.later(work), { org_id: who.orgId, livemode: row.livemode });
  }
  return toHistoryImport({ ...row, auditEntryId: entry.id });
}

/**
 * The import's statements: its row, then the new payments and their labels, each one
 * set-based insert from one JSON parameter (whatever the number of records, far from
 * Postgres' 65,535 bind parameters).
 */
function writes(db: Database, row: HistoryImportRow, fresh: readonly StoredRecord[]) {
  const payments: unknown[] = [];
  const labels: unknown[] = [];
  for (const record of fresh) {
    const paymentId = newId(row.createdAt.getTime());
    payments.push({ id: paymentId, counterparty: counterpartyOf(record), record });
    if (record.label) {
      labels.push({
        id: newId(row.createdAt.getTime()),
        payment_id: paymentId,
        label: record.label.label,
        known_at: record.label.labeled_at,
      });
    }
  }
  const statements = [
    db.insert(historyImports).values(row),
    db.execute(sql`
      insert into payments (id, org_id, livemode, external_id, import_id, agent_id, kind,
        counterparty, amount, currency, decision, occurred_at, record)
      select (p->>'id')::uuid, ${row.orgId}::uuid, ${row.livemode}, p->'record'->>'id',
        ${row.id}::uuid, (p->'record'->>'agent_id')::uuid, p->'record'->>'kind',
        p->>'counterparty', (p->'record'->'amount'->>'amount')::bigint,
        p->'record'->'amount'->>'currency', null, (p->'record'->>'occurred_at')::timestamptz,
        p->'record'
      from jsonb_array_elements(${JSON.stringify(payments)}::jsonb) p`),
  ] as const;
  if (labels.length === 0) return statements;
  return [
    ...statements,
    db.execute(sql`
      insert into payment_labels (id, org_id, payment_id, livemode, label, known_at, source)
      select l.id, ${row.orgId}::uuid, l.payment_id, ${row.livemode}, l.label, l.known_at, 'import'
      from jsonb_to_recordset(${JSON.stringify(labels)}::jsonb)
        as l(id uuid, payment_id uuid, label text, known_at timestamptz)`),
  ] as const;
}

const UNIQUE_VIOLATION = "23505";

/**
 * Another import stored one of these ids between this one's read and its write (the only
 * unique index an import's write can meet: every other key is a fresh UUIDv7).
 */
function isExternalIdRace(error: unknown): boolean {
  return (error as { code?: string } | null)?.code === UNIQUE_VIOLATION;
}

/** A race lost again after its retry: 409, retry later (nothing of this call was stored). */
function raced(error: unknown): unknown {
  if (!isExternalIdRace(error)) return error;
  return new ApiError("history_record_conflict", [
    {
      path: "records",
      message: "another import stored some of these ids at the same time: send the call again",
      code: "race",
    },
  ]);
}

/** The imports of the caller's mode, newest first. */
export async function listImports(
  tenant: Tenant,
  query: { limit: number; cursor?: string | undefined },
): Promise<Page<HistoryImportView>> {
  return mapPage(await listById(tenant, historyImports, query), toHistoryImport);
}
