import { and, eq, sql } from "drizzle-orm";
import { SPEND_STATE_SQL, spendStateOf } from "../billing/guard";
import { type AnchorRow, activeIssuers, anchorsOf, type RootHeader } from "../credentials/issuers";
import { type Placeholders, preparedOnce } from "../db/prepared";
import { assessments, reviews } from "../db/schema";
import type { Tenant } from "../db/tenant";
import { refinementColumns } from "../reviews/records";
import { aggregatesJson } from "../rules/aggregates";
import type { AgentRowView, AssessContext } from "./input";
import { recordJson } from "./outcome";

/** What the request itself says about who acts and with whom. */
export interface ContextQuery {
  contentHash: string;
  idempotencyKey: string | null;
  /** The mode of the credential: idempotency keys are kept apart per mode. */
  livemode: boolean;
  /** RFC 7638 thumbprint of the open mandate's `cnf.jwk`. */
  thumbprint: string | null;
  cardRef: string | null;
  agentId: string | null;
  currency: string | null;
  counterparty: string | null;
  /**
   * The header of the root of the request's AP2 credential: the org's trust anchors are read
   * too, in the same batch (a `kid` the anchors lack may refresh an issuer's JWKS URL).
   */
  credentialRoot?: RootHeader | null;
}

/**
 * One batch of three statements after authentication's two: the replay lookup with its review
 * item (for the refinement), the idempotency key's owner, and one statement for the rest: the
 * agent named by each piece of evidence, the agent's history, the window aggregates the active
 * and shadow rule lists read, the active and shadow policies (a shadow adds no round trip and
 * no statement), and the spend guard's state (plan, cap, meter). The
 * agent chosen is the key's, else the card's, else the explicit one; the history is that
 * agent's. For a replay that last statement answers no row; the anchoring frontier, which only
 * a replay's answer needs, rides in the replay lookup.
 */
export async function loadContext(tenant: Tenant, q: ContextQuery): Promise<AssessContext> {
  const [replay, keyOwner, identity, issuers] = await tenant.batch((db) => [
    replayOf(db, { contentHash: q.contentHash }),
    keyOwnerOf(db, { livemode: q.livemode, idempotencyKey: q.idempotencyKey ?? "" }),
    identityAndHistory(db, {
      contentHash: q.contentHash,
      livemode: q.livemode,
      thumbprint: q.thumbprint,
      cardRef: q.cardRef,
      agentId: q.agentId,
      currency: q.currency,
      counterparty: q.counterparty,
    }),
    ...(q.credentialRoot ? [activeIssuers(db)] : []),
  ]);
  const rows = (identity as unknown as { rows: { context: Record<string, unknown> }[] }).rows;
  const row = rows[0]?.context ?? {};
  type PolicyRow = { id: string; version: number | null; rules: unknown };
  const active = row.policy as PolicyRow | null;
  const shadow = row.shadow_policy as PolicyRow | null;
  return {
    replay: replay[0]?.assessment ?? null,
    replayReview: replay[0]?.review ?? null,
    keyOwner: keyOwner[0]?.contentHash ?? null,
    policy: active?.version
      ? { id: active.id, version: active.version, rules: active.rules }
      : null,
    shadow: shadow
      ? {
          id: shadow.id,
          version: shadow.version,
          rules: shadow.rules,
          window_count: Number(row.shadow_window_count ?? 0),
          aggregates: (row.shadow_aggregates as Record<string, unknown> | null) ?? null,
        }
      : null,
    keyHit: (row.key_hit as AssessContext["keyHit"]) ?? null,
    cardHit: (row.card_hit as AssessContext["cardHit"]) ?? null,
    explicit: (row.explicit as AgentRowView | null) ?? null,
    agent: (row.agent as AgentRowView | null) ?? null,
    history: (row.history as AssessContext["history"]) ?? null,
    aggregates: (row.aggregates as Record<string, unknown> | null) ?? null,
    // Only a replay's stored entry can be anchored already: a fresh one is sequenced after
    // this read, past any checkpoint it could see.
    anchoredThrough: Number(replay[0]?.anchored ?? 0),
    spend: spendStateOf((row.spend as Record<string, unknown> | null) ?? undefined),
    ...(q.credentialRoot && !replay[0]
      ? {
          anchors: await anchorsOf(
            tenant,
            tenant.env,
            (issuers ?? []) as AnchorRow[],
            q.credentialRoot,
          ),
        }
      : {}),
  };
}

const AGENT_JSON = sql.raw(`json_build_object('id', a.id, 'status', a.status,
  'trust_score', a.trust_score, 'risk_tier', a.risk_tier, 'card_status', a.card_status)`);

type IdentityValues = Pick<
  ContextQuery,
  "contentHash" | "livemode" | "thumbprint" | "cardRef" | "agentId" | "currency" | "counterparty"
>;

/** The stored assessment of the same request, with its review item (for the refinement). */
const replayOf = preparedOnce((db, q: Placeholders<{ contentHash: string }>) =>
  db
    .select({
      // What the answer is made of, and no more, as one value (see recordJson).
      assessment: recordJson,
      review: refinementColumns,
      // A replay's answer says whether its entry is anchored; the identity statement reads
      // nothing for a replay, so the frontier rides here.
      anchored: sql<number | string | null>`(select max(c.tree_size) from audit_checkpoints c)`,
    })
    .from(assessments)
    .leftJoin(reviews, eq(reviews.assessmentId, assessments.id))
    .where(eq(assessments.contentHash, q.contentHash)),
);

/** The assessment holding the caller's idempotency key in this mode, if any. */
const keyOwnerOf = preparedOnce(
  (db, q: Placeholders<{ livemode: boolean; idempotencyKey: string }>) =>
    db
      .select({ contentHash: assessments.contentHash })
      .from(assessments)
      .where(
        and(eq(assessments.livemode, q.livemode), eq(assessments.idempotencyKey, q.idempotencyKey)),
      ),
);

const identityAndHistory = preparedOnce((db, q: Placeholders<IdentityValues>) => {
  const scope = {
    agentId: sql`(select id from chosen)`,
    counterparty: sql`${q.counterparty}`,
    currency: sql`${q.currency}`,
    livemode: sql`${q.livemode}`,
    until: null,
  };
  return db.execute(sql`
    with replayed as (
      select exists (select 1 from assessments r where r.content_hash = ${q.contentHash}) as yes
    ),
    key_hit as (
      select k.agent_id, k.status from agent_keys k where k.thumbprint = ${q.thumbprint}
    ),
    card_hit as (
      select a.id as agent_id, a.card_status from agents a
      where ${q.cardRef}::text is not null
        and (a.card_digest = ${q.cardRef} or a.card_url = ${q.cardRef}
             or a.card_source_url = ${q.cardRef})
      order by (a.card_status = 'verified') desc, a.id desc
      limit 1
    ),
    chosen as (
      select coalesce((select agent_id from key_hit),
                      (select agent_id from card_hit where card_status = 'verified'),
                      ${q.agentId}::uuid) as id
    ),
    -- The window starts as computed columns: under row-level security PostgreSQL will not use
    -- "now() - interval" (not leakproof) as an index condition inside the subqueries below,
    -- and would read the agent's whole history (src/rules/aggregates.ts).
    window_seconds as materialized (
      select w.s, now() - make_interval(secs => w.s) as since,
             w.shadow_s, now() - make_interval(secs => w.shadow_s) as shadow_since,
             now() - interval '60 seconds' as burst_since
      from (select coalesce((select p.velocity_window_seconds from policies p
                             where p.status = 'active'), 0) as s,
                   coalesce((select p.velocity_window_seconds from policies p
                             where p.shadow), 0) as shadow_s) w
    )
    -- One column: every column of a result costs a description of its own over HTTP.
    select json_build_object(
      'key_hit', (select row_to_json(key_hit) from key_hit),
      'card_hit', (select row_to_json(card_hit) from card_hit),
      'explicit', (select ${AGENT_JSON} from agents a where a.id = ${q.agentId}::uuid),
      'agent', (select ${AGENT_JSON} from agents a where a.id = (select id from chosen)),
      'history', (select json_build_object(
         'window_count', case when w.s = 0 then 0 else (
           select count(*) from assessments h
           where h.agent_id = c.id and h.livemode = ${q.livemode}
             and h.created_at > w.since) end,
         'burst', (select count(*) from assessments h
           where h.agent_id = c.id and h.livemode = ${q.livemode}
             and h.created_at > w.burst_since),
         -- Bounded reads: the model needs "a few approvals" and a recent median, not all history.
         'approved_count', (select count(*) from (select 1 from assessments h
           where h.agent_id = c.id and h.livemode = ${q.livemode} and h.decision = 'approve'
           limit 1000) n),
         'median_amount', (select percentile_disc(0.5) within group (order by r.amount)
           from (select h.amount from assessments h
                 where h.agent_id = c.id and h.livemode = ${q.livemode} and h.decision = 'approve'
                   and h.currency = ${q.currency}
                 order by h.created_at desc limit 200) r),
         -- Paid (or contacted) before means an approved action, not a refused attempt.
         'counterparty_seen', exists (select 1 from assessments h
           where h.agent_id = c.id and h.livemode = ${q.livemode} and h.decision = 'approve'
             and h.counterparty = ${q.counterparty}))
       from chosen c, window_seconds w
       where c.id is not null),
      -- The shadow policy's velocity window, counted only when it has one.
      'shadow_window_count', (select case when w.shadow_s = 0 then 0 else (
         select count(*) from assessments h
         where h.agent_id = c.id and h.livemode = ${q.livemode}
           and h.created_at > w.shadow_since) end
       from chosen c, window_seconds w
       where c.id is not null),
      -- The active rule list's window aggregates: '[]' (nothing counted) for most policies.
      'aggregates', ${aggregatesJson(
        sql`coalesce((select p.aggregates from policies p where p.status = 'active'), '[]'::jsonb)`,
        scope,
      )},
      -- The shadow rule list's window aggregates, the same way.
      'shadow_aggregates', ${aggregatesJson(
        sql`coalesce((select p.aggregates from policies p where p.shadow), '[]'::jsonb)`,
        scope,
      )},
      -- The active and shadow policies and the spend guard's state ride
      -- in this one statement (they were statements of their own): each is a scalar subquery,
      -- and a statement costs the database a parse, a plan and a result set however small.
      'policy', (select json_build_object('id', p.id, 'version', p.version, 'rules', p.rules)
         from policies p where p.status = 'active'),
      'shadow_policy', (select json_build_object('id', p.id, 'version', p.version, 'rules', p.rules)
         from policies p where p.shadow),
      'spend', (select row_to_json(s) from (${SPEND_STATE_SQL}) s)) as context
    -- A replay answers its stored row: no history, aggregates or policy to compute or decode.
    where not (select yes from replayed)`);
});
