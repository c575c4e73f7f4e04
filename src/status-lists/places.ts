/**
 * The places of the revocable things the service issues besides verdicts: agents, agent keys
 * and action grants (docs/status-lists.md, "Issued"). Each takes its place from the sequence of
 * the ledger entry that creates it (slot `2s`, src/status-lists/indices.ts), kept on its row as
 * `status_list`/`status_idx`; rows made before places existed keep none and show none.
 *
 * A place's status is derived, in SQL, from the states of the row and of what it depends on,
 * by one statement added to the transaction of every change that moves one of those states
 * (after the change's own statements, so it reads them; under READ COMMITTED each statement
 * also sees what a concurrent writer committed first). The list and the records therefore never
 * disagree, whichever of two racing changes lands last:
 *
 * | thing | INVALID (1) | SUSPENDED (2) | VALID (0) |
 * |---|---|---|---|
 * | agent | revoked | suspended | active |
 * | agent key | the key or its agent revoked | its agent suspended | otherwise |
 * | grant | redeemed (single use), its mandate or its agent revoked | its agent suspended | otherwise |
 *
 * INVALID is final (§7.1 makes SUSPENDED the reversible one): an INVALID place is never set back.
 */
import { type SQL, sql } from "drizzle-orm";
import type { Database } from "../db/client";
import type { Env } from "../env";
import { entryPlace, placeReference } from "./indices";

/** A row's place columns. */
export interface PlaceColumns {
  statusList: number | null;
  statusIdx: number | null;
}

/** The place columns of a thing its entry of `sequence` creates. */
export function placeColumns(env: Env, orgId: string, sequence: number) {
  const { list, idx } = entryPlace(env, orgId, sequence);
  return { statusList: list, statusIdx: idx };
}

/**
 * The `status_list {idx, uri}` (draft-ietf-oauth-status-list §6.2) a record shows: null for a
 * row made before places existed.
 */
export function statusListOf(env: Env, orgId: string, row: PlaceColumns) {
  if (row.statusList === null || row.statusIdx === null) return null;
  return placeReference(env, orgId, { list: row.statusList, idx: row.statusIdx });
}

/** Writes the places `rows` selects (list, idx, status, subject_type, subject_id). */
function settle(db: Database, rows: SQL) {
  return db.execute(sql`insert into status_list_entries
      (list, idx, status, subject_type, subject_id)
    ${rows}
    on conflict (org_id, list, idx) do update
      set status = excluded.status, updated_at = now()
      where status_list_entries.status <> 1 and status_list_entries.status <> excluded.status`);
}

const agentStatus = sql`case a.status when 'revoked' then 1 when 'suspended' then 2 else 0 end`;

/**
 * The places of an agent, of its keys and of its unexpired grants (at `at`), after its status
 * moved: revoking an agent revokes its keys' and grants' places too (its grants no longer
 * redeem, docs/action-authority.md, and a party holding one of its keys learns it from the
 * key's own place), suspending it suspends them, reactivating it makes them VALID again.
 */
export function settleAgentPlaces(db: Database, agentId: string, at: Date) {
  return [
    settle(
      db,
      sql`select a.status_list, a.status_idx, ${agentStatus}, 'agent', a.id::text
        from agents a where a.id = ${agentId} and a.status_list is not null`,
    ),
    settleKeyPlaces(db, sql`k.agent_id = ${agentId}`),
    settleGrantPlaces(db, sql`m.agent_id = ${agentId}`, at),
  ];
}

/** The place of one key of an agent, after the key moved. */
export function settleKeyPlace(db: Database, agentId: string, thumbprint: string) {
  return settleKeyPlaces(db, sql`k.agent_id = ${agentId} and k.thumbprint = ${thumbprint}`);
}

function settleKeyPlaces(db: Database, where: SQL) {
  return settle(
    db,
    sql`select k.status_list, k.status_idx,
        case when k.status = 'revoked' or a.status = 'revoked' then 1
             when a.status = 'suspended' then 2 else 0 end,
        'agent_key', k.thumbprint
      from agent_keys k join agents a on a.id = k.agent_id
      where ${where} and k.status_list is not null`,
  );
}

/** The place of one grant, after it was redeemed. */
export function settleGrantPlace(db: Database, grantId: string) {
  // Redeemed: whenever it expires, it is settled now.
  return settleGrantPlaces(db, sql`d.grant_id = ${grantId}`, null);
}

/** The places of a mandate's unexpired grants (at `at`), after it was revoked. */
export function settleMandateGrantPlaces(db: Database, mandateId: string, at: Date) {
  return settleGrantPlaces(db, sql`d.mandate_id = ${mandateId}`, at);
}

/**
 * The places of the grants `where` selects (over `d` the decision, `m` its mandate): only the
 * ones unexpired at `at`, since an expired grant is refused by its own `exp`.
 */
function settleGrantPlaces(db: Database, where: SQL, at: Date | null) {
  return settle(
    db,
    sql`select d.status_list, d.status_idx,
        case when m.status = 'revoked' or a.status = 'revoked'
               or exists (select 1 from action_redemptions r where r.grant_id = d.grant_id) then 1
             when a.status = 'suspended' then 2 else 0 end,
        'action_grant', d.grant_id::text
      from action_decisions d
      join action_mandates m on m.id = d.mandate_id
      join agents a on a.id = m.agent_id
      where ${where} and d.status_list is not null
        ${at ? sql`and d.grant_expires_at > ${at.toISOString()}::timestamptz` : sql``}`,
  );
}
