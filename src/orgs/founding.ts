import { sql } from "drizzle-orm";
import type { BatchResponse } from "drizzle-orm/batch";
import { sha256 } from "#audit/digest";
import { toHex, utf8 } from "#audit/encoding";
import type { Caller } from "../auth/caller";
import { scopesOfRole } from "../auth/scopes";
import type { Batch, Tenant } from "../auth/tenant";
import { type Database, database } from "../db/client";
import { ApiError } from "../errors";
import { commit } from "../ledger/commit";
import { newId } from "../lib/ids";

interface OrgRow extends Record<string, unknown> {
  id: string;
  name: string;
  created_at: string;
}

/**
 * The founder's organization id, derived from the IdP subject (a UUIDv8 of its SHA-256): a
 * user founds one organization, so racing first calls name the same org, reach the same ledger
 * object and record one `org.created` between them, instead of a loser's entry for an org that
 * never exists.
 */
export function foundedOrgId(subject: string): string {
  const bytes = sha256(utf8(`org:${subject}`)).slice(0, 16);
  bytes[6] = ((bytes[6] as number) & 0x0f) | 0x80;
  bytes[8] = ((bytes[8] as number) & 0x3f) | 0x80;
  const hex = toHex(bytes);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/**
 * Founds the signed-in user's organization (named `requested`, or after the user), with the
 * user as its owner, committed with `org.created` in one transaction; a user who founded one
 * already gets it back (`created` false). The founder becomes the request's caller.
 */
export async function foundOrg(tenant: Tenant, requested: string | undefined) {
  if (tenant.credential.kind !== "session") throw new ApiError("session_required");
  const { subject, email } = tenant.credential;
  const name = requested ?? (email ? `${email}'s organization` : "My organization");
  const orgId = foundedOrgId(subject);
  const db = database(tenant.env);
  const settings = db.execute(sql`select set_config('app.user_subject', ${subject}, true),
                                         set_config('app.org_id', ${orgId}, true)`);
  // Before the write: the user, upserted (racing first calls agree on its id, which the entry
  // names as its actor), and the org they founded, if any (under another id when founded
  // before ids were derived).
  const founded = sql`select o.id, o.name, o.created_at
                   from organizations o join users u on u.id = o.founder_user_id
                   where u.idp_subject = ${subject}`;
  const [, users, existing] = await db.batch([
    settings,
    db.execute<{ id: string }>(sql`insert into users (id, idp_subject, email)
                   values (${newId()}, ${subject}, ${email})
                   on conflict (idp_subject) do update set email = coalesce(excluded.email, users.email)
                   returning id`),
    db.execute<OrgRow>(founded),
  ]);
  const userId = users.rows[0]?.id;
  if (!userId) throw new ApiError("internal_error");
  const founder: Caller = {
    orgId,
    actor: { type: "user", id: userId, subject, email, role: "owner" },
    scopes: scopesOfRole("owner"),
    livemode: true,
  };
  const earlier = existing.rows[0];
  if (earlier) {
    tenant.adopt({ ...founder, orgId: earlier.id });
    return { body: body(earlier), created: false };
  }
  const now = new Date();
  const founding = {
    env: tenant.env,
    caller: async () => founder,
    batch: <T extends Batch>(build: (db: Database) => T) =>
      db.batch([settings, ...build(db)]).then(([, ...results]) => results as BatchResponse<T>),
  };
  // Once per org: a racing first call, or a retry after a failed write, replays the first
  // founding's entry and writes the org its terms name (the founder is unique).
  const { results, preceding } = await commit(
    founding,
    {
      type: "org.created",
      subject: { type: "organization", id: orgId },
      payload: body({ id: orgId, name, created_at: now.toISOString() }),
      once: ["org.created"],
    },
    (db) => [db.execute<OrgRow>(founded)],
    {
      // The organization before its first entry, which refers to it.
      before: (db, { terms }) => [
        // Any conflict, not only the founder's: racing first calls insert the same id, and
        // PostgreSQL raises a unique violation on a constraint the clause does not name.
        db.execute(sql`insert into organizations (id, name, founder_user_id, created_at)
                   values (${orgId}, ${terms.name}, ${userId}, ${terms.created}::timestamptz)
                   on conflict do nothing
                   returning id`),
        db.execute(sql`insert into memberships (org_id, user_id, role)
                   select id, founder_user_id, 'owner' from organizations where id = ${orgId}
                   on conflict do nothing`),
      ],
    },
  );
  const org = results[0].rows[0];
  if (!org) throw new ApiError("internal_error");
  tenant.adopt(founder);
  // Created by this call when its insert made the org, whichever call's entry records it.
  const inserted = preceding[0] as { rows: unknown[] };
  return { body: body(org), created: inserted.rows.length > 0 };
}

function body(org: Pick<OrgRow, "id" | "name" | "created_at">) {
  return {
    object: "organization" as const,
    id: org.id,
    name: org.name,
    created: new Date(org.created_at).toISOString(),
    role: "owner" as const,
  };
}
