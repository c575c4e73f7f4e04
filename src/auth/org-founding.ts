import { sql } from "drizzle-orm";
import { database } from "../db/client";
import { ApiError } from "../errors";
import { record } from "../ledger/ledger";
import { newId } from "../lib/ids";
import type { Caller } from "./caller";
import { scopesOfRole } from "./scopes";
import type { Tenant } from "./tenant";

interface OrgRow {
  id: string;
  name: string;
  created_at: string;
  user_id: string;
}

/**
 * Founds the signed-in user's organization (named `requested`, or after the user), with the
 * user as its owner, and records `org.created`; a user who founded one already gets it back
 * (`created` false). The founder becomes the request's caller.
 */
export async function foundOrg(tenant: Tenant, requested: string | undefined) {
  if (tenant.credential.kind !== "session") throw new ApiError("session_required");
  const { subject, email } = tenant.credential;
  const name = requested ?? (email ? `${email}'s organization` : "My organization");
  const orgId = newId();
  const db = database(tenant.env);
  // One transaction; the unique founder makes a racing second call find the first one's org.
  const results = await db.batch([
    db.execute(sql`select set_config('app.user_subject', ${subject}, true),
                          set_config('app.org_id', ${orgId}, true)`),
    db.execute(sql`insert into users (id, idp_subject, email) values (${newId()}, ${subject}, ${email})
                   on conflict (idp_subject) do update set email = coalesce(excluded.email, users.email)`),
    db.execute(sql`insert into organizations (id, name, founder_user_id)
                   select ${orgId}, ${name}, id from users where idp_subject = ${subject}
                   on conflict (founder_user_id) do nothing`),
    db.execute(sql`insert into memberships (org_id, user_id, role)
                   select id, founder_user_id, 'owner' from organizations where id = ${orgId}
                   on conflict do nothing`),
    db.execute(sql`select o.id, o.name, o.created_at, u.id as user_id
                   from organizations o join users u on u.id = o.founder_user_id
                   where u.idp_subject = ${subject}`),
  ]);
  const org = results[4].rows[0] as unknown as OrgRow | undefined;
  if (!org) throw new ApiError("internal_error");
  const founder: Caller = {
    orgId: org.id,
    actor: { type: "user", id: org.user_id, subject, email, role: "owner" },
    scopes: scopesOfRole("owner"),
    livemode: true,
  };
  tenant.adopt(founder);
  const created = org.id === orgId;
  const body = {
    object: "organization" as const,
    id: org.id,
    name: org.name,
    created: new Date(org.created_at).toISOString(),
    role: "owner" as const,
  };
  // Recorded on every call, once: a retry after a failed append still gets it into the ledger.
  await record(tenant.env, founder, {
    type: "org.created",
    subject: { type: "organization", id: org.id },
    payload: body,
    once: "org.created",
  });
  return { body, created };
}
