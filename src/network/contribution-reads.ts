import { type SQL, sql } from "drizzle-orm";
import type { Database } from "../db/client";
import { FRAUD_LABELS } from "../schemas/vocabulary";

// The reads of one contribution step, in the org's own transaction (row-level security applies):
// its cursors, and the next page of its payments and of its labels past them. Payments only:
// `payment` (imported history) and `ap2_payment` (assessed), never a message's or a call's
// recipient, who is a person.

/** Rows per page; a page never splits the rows of one `created_at` (an import's are one). */
export const PAGE = 1_000;
/** Nothing older is contributed (network_contribute keeps nothing older either). */
export const RETENTION_DAYS = 180;

const PAYMENT_KINDS = sql.raw("'payment', 'ap2_payment'");
const LABELS = sql.raw([...FRAUD_LABELS, "legitimate"].map((l) => `'${l}'`).join(", "));

export interface Cursors {
  payments_through: string | null;
  labels_through: string | null;
}

/** A page's row: what it contributes, and its `created_at` as exact text (the next cursor). */
export type Paged<T> = T & { created: string };

/**
 * The org's cursors (null when it does not contribute in the mode, or is excluded) and the
 * read's upper bound, `now()` less the settle time, as exact text.
 */
export function cursorsQuery(db: Database, livemode: boolean, settleSeconds: number) {
  return db.execute<{ cursors: unknown; bound: string }>(sql`
    select network_cursors(${livemode}) as cursors,
           (now() - make_interval(secs => ${settleSeconds}))::text as bound`);
}

/** The cursor named, the bound, and whether the org contributes, for the pages' filters. */
function cursor(livemode: boolean, settleSeconds: number, name: keyof Cursors): SQL {
  return sql`cur as (
      select c is not null as member, (c->>${sql.raw(`'${name}'`)})::timestamptz as after,
             now() - make_interval(secs => ${settleSeconds}) as bound
      from (select network_cursors(${livemode}) as c) x)`;
}

/**
 * The identifiers of payment `p`: its payee, its assessment's network ids, and, without them
 * (imported history, or assessed before they were recorded), its agent's key thumbprints.
 */
const IDENTIFIERS = sql`p.counterparty, a.network_ids,
  case when a.network_ids is null then
    (select json_agg(k.thumbprint order by k.thumbprint) from agent_keys k
     where k.org_id = p.org_id and k.agent_id = p.agent_id)
  end as agent_keys`;

const ASSESSMENT = sql`left join assessments a on a.org_id = p.org_id and a.id = p.assessment_id`;

/** The next page of payments of the org's mode past its cursor, oldest first. */
export function paymentsPage(db: Database, livemode: boolean, settleSeconds: number) {
  const matching = sql`cur.member and p.livemode = ${livemode} and p.kind in (${PAYMENT_KINDS})
    and p.occurred_at > now() - make_interval(days => ${RETENTION_DAYS})
    and (cur.after is null or p.created_at > cur.after) and p.created_at <= cur.bound`;
  return db.execute(sql`
    with ${cursor(livemode, settleSeconds, "payments_through")},
    page as (
      select p.created_at from payments p, cur where ${matching}
      order by p.created_at limit ${PAGE})
    select ${IDENTIFIERS}, to_char(p.occurred_at at time zone 'UTC', 'YYYY-MM-DD') as day,
           p.created_at::text as created
    from payments p ${ASSESSMENT}, cur
    where ${matching} and p.created_at <= (select max(created_at) from page)
    order by p.created_at`);
}

/** The next page of fraud and legitimate labels of the org's mode's payments past its cursor. */
export function labelsPage(db: Database, livemode: boolean, settleSeconds: number) {
  const matching = sql`cur.member and l.livemode = ${livemode} and l.label in (${LABELS})
    and p.kind in (${PAYMENT_KINDS})
    and l.known_at > now() - make_interval(days => ${RETENTION_DAYS})
    and (cur.after is null or l.created_at > cur.after) and l.created_at <= cur.bound`;
  const labelled = sql`payment_labels l join payments p on p.org_id = l.org_id and p.id = l.payment_id`;
  return db.execute(sql`
    with ${cursor(livemode, settleSeconds, "labels_through")},
    page as (
      select l.created_at from ${labelled}, cur where ${matching}
      order by l.created_at limit ${PAGE})
    select ${IDENTIFIERS}, l.label, to_char(l.known_at at time zone 'UTC', 'YYYY-MM-DD') as day,
           l.created_at::text as created
    from ${labelled} ${ASSESSMENT}, cur
    where ${matching} and l.created_at <= (select max(created_at) from page)
    order by l.created_at`);
}

/**
 * Adds the rows and moves the cursors (null: leaves one where it is), in one statement: -1 when
 * the org stopped contributing.
 */
export function contributeQuery(
  db: Database,
  livemode: boolean,
  rows: unknown[],
  paymentsThrough: string | null,
  labelsThrough: string | null,
) {
  return db.execute<{ written: number }>(sql`
    select network_contribute(${livemode}, ${JSON.stringify(rows)}::json,
      ${paymentsThrough}::timestamptz, ${labelsThrough}::timestamptz) as written`);
}
