/**
 * Setting a place of the service's own status lists (docs/status-lists.md, "Issued"): one
 * statement, added to the batch of the change that causes it (a review resolution voiding a
 * verdict, a key or agent revoked, a grant revoked), so the list and the change never disagree.
 */
import { sql } from "drizzle-orm";
import { logIdFor } from "#audit/checkpoint";
import { isClaims, jsonOfBase64url, own } from "../ap2-credentials/claims";
import type { Database } from "../db/client";
import { STATUS } from "./encoding";
import { parseStatusListId } from "./indices";

export interface Place {
  list: number;
  idx: number;
}

/** The place a signed payload's `status.status_list` names in `orgId`'s lists, or null. */
export function placeInJws(jws: string, orgId: string): Place | null {
  try {
    const claims = jsonOfBase64url(jws.split(".")[1] ?? "");
    const status = isClaims(claims) ? own(claims, "status") : undefined;
    const list = isClaims(status) ? own(status, "status_list") : undefined;
    if (!isClaims(list)) return null;
    const idx = own(list, "idx");
    const uri = own(list, "uri");
    if (typeof idx !== "number" || typeof uri !== "string") return null;
    const id = parseStatusListId(uri.slice(uri.lastIndexOf("/") + 1));
    return id && id.logId === logIdFor(orgId) ? { list: id.list, idx } : null;
  } catch {
    return null;
  }
}

/** The statement that sets `subject`'s place to `status` (INVALID by default). */
export function setPlaceStatus(
  db: Database,
  place: Place,
  subject: { type: string; id: string },
  status: number = STATUS.invalid,
) {
  return db.execute(sql`insert into status_list_entries
      (list, idx, status, subject_type, subject_id)
    values (${place.list}, ${place.idx}, ${status}, ${subject.type}, ${subject.id})
    on conflict (org_id, list, idx) do update
      set status = excluded.status, updated_at = now()`);
}

/**
 * The statement that voids every verdict the service signed for `principalId`'s agents before
 * its erasure (issue 42 §2: "a verdict voided by … an erasure turns INVALID"): each stored Risk
 * Payload's own place, read from its `status` claim in the database, in the erasure's batch.
 * A payload without a place (signed before status lists, or a review's final payload, whose
 * first place the resolution voided already) has nothing to void.
 */
export function voidPrincipalVerdicts(db: Database, principalId: string) {
  return db.execute(sql`
    insert into status_list_entries (list, idx, status, subject_type, subject_id)
    select substring(place->>'uri' from '[.]([0-9]+)$')::int, (place->>'idx')::int,
           ${STATUS.invalid}, 'assessment', v.id
      from (
        select s.id, convert_from(decode(
                 translate(split_part(s.jws, '.', 2), '-_', '+/')
                   || repeat('=', (4 - length(split_part(s.jws, '.', 2)) % 4) % 4),
                 'base64'), 'UTF8')::jsonb -> 'status' -> 'status_list' as place
          from assessments s
          join agents a on a.org_id = s.org_id and a.id = s.agent_id
         where a.principal_id = ${principalId}::uuid
      ) v
     where jsonb_typeof(place -> 'idx') = 'number' and place->>'uri' ~ '[.][0-9]+$'
    on conflict (org_id, list, idx) do update
      set status = excluded.status, updated_at = now()
      where status_list_entries.status <> excluded.status`);
}
