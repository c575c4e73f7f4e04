import { canonicalize } from "#audit/canonical";
import { payloadDigest } from "#audit/digest";
import { HistoryRecord, type HistoryRecordInput } from "../schemas/history";
import type { HistoryLabel } from "../schemas/vocabulary";

// An import's records apart from the database: each checked on its own and against the others
// of its call, then normalized to the form that is stored, compared and digested
// (docs/history.md, "Importing history").

/** How far ahead of the service's clock a record's times may be (the sender's clock may run fast). */
export const FUTURE_SKEW_MS = 5 * 60_000;

/** The kind of a record that names none. */
export const DEFAULT_KIND = "payment";

/**
 * A record as stored in `payments.record`: times in UTC (ISO 8601, milliseconds), the currency
 * upper-case, the kind filled in. Two records are the same when these forms are equal.
 */
export interface StoredRecord {
  id: string;
  occurred_at: string;
  agent_id: string;
  payee: { id: string; name?: string };
  amount: { amount: number; currency: string };
  kind: string;
  label?: { label: HistoryLabel; labeled_at: string };
}

/** One fault of one record: its index in the call, its id if it has one, where and what. */
export interface RecordError {
  index: number;
  id: string | null;
  path: string;
  message: string;
  code: string;
}

/** The stored form of a valid record. */
export function normalize(record: HistoryRecordInput): StoredRecord {
  return {
    id: record.id,
    occurred_at: new Date(record.occurred_at).toISOString(),
    agent_id: record.agent_id,
    payee: record.payee.name === undefined ? { id: record.payee.id } : { ...record.payee },
    amount: { amount: record.amount.amount, currency: record.amount.currency.toUpperCase() },
    kind: record.kind ?? DEFAULT_KIND,
    ...(record.label
      ? {
          label: {
            label: record.label.label,
            labeled_at: new Date(record.label.labeled_at).toISOString(),
          },
        }
      : {}),
  };
}

function idOf(item: unknown): string | null {
  const id = (item as { id?: unknown } | null)?.id;
  return typeof id === "string" ? id : null;
}

/**
 * Checks every record of a call, each against the schema, the clock and the records before it
 * (an id repeated in one call is the later record's fault), and answers the stored forms, or
 * every fault of every record: a call is stored whole or not at all.
 */
export function checkRecords(
  items: readonly unknown[],
  now: number,
): { records: StoredRecord[]; errors: RecordError[] } {
  const records: StoredRecord[] = [];
  const errors: RecordError[] = [];
  const firstIndex = new Map<string, number>();
  const latest = now + FUTURE_SKEW_MS;
  items.forEach((item, index) => {
    const fault = (path: string, message: string, code = "custom") =>
      errors.push({
        index,
        id: idOf(item),
        path: path === "" ? `records.${index}` : `records.${index}.${path}`,
        message,
        code,
      });
    const id = idOf(item);
    if (id !== null) {
      const first = firstIndex.get(id);
      if (first === undefined) firstIndex.set(id, index);
      else fault("id", `repeats the id of records.${first}: an id is one record`);
    }
    const parsed = HistoryRecord.safeParse(item);
    if (!parsed.success) {
      for (const issue of parsed.error.issues) {
        fault(issue.path.map(String).join("."), issue.message, issue.code);
      }
      return;
    }
    const record = normalize(parsed.data);
    const occurred = Date.parse(record.occurred_at);
    if (occurred > latest) fault("occurred_at", "must not be more than 5 minutes in the future");
    if (record.label) {
      const known = Date.parse(record.label.labeled_at);
      if (known < occurred) fault("label.labeled_at", "must not be before occurred_at");
      if (known > latest) {
        fault("label.labeled_at", "must not be more than 5 minutes in the future");
      }
    }
    records.push(record);
  });
  return { records, errors };
}

/**
 * Whether a stored record (as read back from jsonb) has the content of `record`. A payee the
 * principal's erasure cleared (`payee: null`, docs/identity.md, "What erasure reaches") is not
 * compared: the record sent again is the one that was stored, and it is not stored again.
 */
export function sameRecord(stored: unknown, record: StoredRecord): boolean {
  const erased = (stored as { payee?: unknown } | null)?.payee === null;
  return canonicalize(stored) === canonicalize(erased ? { ...record, payee: null } : record);
}

/** The digest a call's ledger entry states of its records: RFC 8785 JSON of the array, SHA-256. */
export function recordsDigest(records: readonly StoredRecord[]): string {
  return payloadDigest(records);
}

/** The payee as the assess path matches it (`counterpartyKey` in assess/pipeline.ts). */
export function counterpartyOf(record: StoredRecord): string {
  return payloadDigest(record.payee.id);
}
