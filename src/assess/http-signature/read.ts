import { sql } from "drizzle-orm";
import { type Placeholders, preparedOnce } from "../../db/prepared";
import type { HttpSignatureQuery } from "./nonce";
import type { HttpSignatureRead } from "./verify";

export type { HttpSignatureQuery } from "./nonce";

type ReadValues = HttpSignatureQuery & { livemode: boolean; testClock: string | null };

/**
 * One statement of the context read's batch: the nonce inserted (a conflict with a row that has
 * not expired by the request's clock, its test clock's or `now()`, is a replay; an expired row
 * is reused), up to eight other expired nonces of the org and mode deleted, and the agent key
 * the `keyid` names with whether it signs its agent's verified Agent Card. Row-level security
 * keeps all of it to the caller's org; nothing is written when the credential failed.
 */
export const httpSignatureRead = preparedOnce((db, q: Placeholders<ReadValues>) =>
  db.execute(sql`with clock as (
      select coalesce((select c.frozen_time from test_clocks c where c.id = ${q.testClock}::uuid),
        now()) as at
    ), fresh as (
      insert into http_signature_nonces (livemode, digest, expires_at)
      select ${q.livemode}::boolean, ${q.nonceDigest}::text, ${q.nonceExpiresAt}::timestamptz
      where ${q.nonceDigest}::text is not null
        and nullif(current_setting('app.org_id', true), '') is not null
      on conflict (org_id, livemode, digest) do update set expires_at = excluded.expires_at
        where http_signature_nonces.expires_at < (select at from clock)
      returning 1
    ), swept as (
      delete from http_signature_nonces n where (n.org_id, n.livemode, n.digest) in (
        select o.org_id, o.livemode, o.digest from http_signature_nonces o
        where o.livemode = ${q.livemode}::boolean and o.expires_at < (select at from clock)
          and o.digest <> coalesce(${q.nonceDigest}::text, '')
        limit 8)
      returning 1
    )
    select json_build_object(
      'key', (select json_build_object('thumbprint', k.thumbprint, 'agent_id', k.agent_id,
          'jwk', k.jwk, 'alg', k.alg, 'status', k.status,
          'signs_card', a.card_status = 'verified' and exists (
            select 1 from jsonb_array_elements(a.card_signatures) s
            where s->>'kid' = k.thumbprint and s->>'status' = 'valid'))
        from agent_keys k join agents a on a.org_id = k.org_id and a.id = k.agent_id
        where k.thumbprint = ${q.keyid}::text),
      'nonce_fresh', case when ${q.nonceDigest}::text is null then null
        else exists (select 1 from fresh) end,
      'swept', (select count(*) from swept)) as http_signature`),
);

/** The statement's answer as the verifier reads it. */
export function httpSignatureReadOf(result: unknown): HttpSignatureRead {
  const rows = (result as { rows: { http_signature: HttpSignatureRead }[] }).rows;
  const row = rows[0]?.http_signature;
  return { key: row?.key ?? null, nonce_fresh: row?.nonce_fresh ?? null };
}
