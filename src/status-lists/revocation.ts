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
