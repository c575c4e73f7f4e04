import { env } from "cloudflare:test";
import { neon, neonConfig } from "@neondatabase/serverless";

neonConfig.fetchEndpoint = (host, port) => `http://${host}:${port}/sql`;

/** SQL as the migration owner, bypassing RLS: to inspect and tamper as an insider could. */
export const ownerSql = neon(env.TEST_OWNER_DATABASE_URL);

/** SQL as the application role the Worker uses, subject to RLS. */
export const appSql = neon(env.DATABASE_URL as string);

/** Adds a signed-up user to another org with a role, as an invitation flow would. */
export async function addMember(orgId: string, subject: string, role: "admin" | "member") {
  await ownerSql`insert into memberships (org_id, user_id, role)
                 select ${orgId}, id, ${role} from users where idp_subject = ${subject}`;
}

/**
 * The org's payment labels (migration 0015: one per feedback label, written by its trigger, or
 * per imported label), oldest known first, with `known_at` as ISO 8601: when each counts from.
 */
export async function paymentLabels(orgId: string) {
  const rows = await ownerSql`select feedback_id, payment_id, livemode, label, source,
      to_json(known_at) #>> '{}' as known_at
    from payment_labels where org_id = ${orgId} order by known_at, id`;
  return rows.map((row) => ({ ...row, known_at: new Date(row.known_at).toISOString() }));
}
