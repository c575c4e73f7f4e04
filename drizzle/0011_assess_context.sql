-- The assess context read's largest statement as a function, so that the database plans it once
-- per session instead of once per request.
--
-- Sent as a parameterised statement, it was parsed and planned on every assessment and every
-- replay: about 30 subqueries, each over a table with row-level security, took the database
-- 0.6 ms to parse and 2.4 ms to plan, and 0.1 ms to run (PostgreSQL 15, per-statement durations
-- of `bench:assess`; docs/performance.md, "The context read, planned once"). PL/pgSQL keeps the
-- plan of each statement of a function for the life of the session, and sessions outlive
-- requests: Neon's SQL-over-HTTP proxy returns a connection to its pool after each request, and
-- the local endpoint keeps its sessions and their plans (scripts/sql-endpoint/transaction.ts).
--
-- SECURITY INVOKER (the default): every read is the caller's, under the caller's row-level
-- security, exactly as the statement it replaces. `plan_cache_mode = force_generic_plan`: one
-- plan for every request, never replanned for a request's values; `jit = off`: a generic plan's
-- estimates are not the values', and compiling a plan costs more than running this one. The parameters are prefixed `p_`: several
-- share their name with a column of `assessments`.
CREATE FUNCTION assess_context(
  p_content_hash text,
  p_livemode boolean,
  p_thumbprint text,
  p_card_ref text,
  p_agent_id uuid,
  p_currency text,
  p_counterparty text
) RETURNS json
LANGUAGE plpgsql STABLE SECURITY INVOKER
SET search_path = public, pg_temp
SET plan_cache_mode = force_generic_plan
SET jit = off
AS $$
BEGIN
  RETURN (
    WITH replayed AS (
      SELECT exists (SELECT 1 FROM assessments r WHERE r.content_hash = p_content_hash) AS yes
    ),
    key_hit AS (
      SELECT k.agent_id, k.status FROM agent_keys k WHERE k.thumbprint = p_thumbprint
    ),
    card_hit AS (
      SELECT a.id AS agent_id, a.card_status FROM agents a
      WHERE p_card_ref IS NOT NULL
        AND (a.card_digest = p_card_ref OR a.card_url = p_card_ref
             OR a.card_source_url = p_card_ref)
      ORDER BY (a.card_status = 'verified') DESC, a.id DESC
      LIMIT 1
    ),
    -- The agent chosen is the key's, else the card's (a verified card), else the explicit one.
    chosen AS (
      SELECT coalesce((SELECT agent_id FROM key_hit),
                      (SELECT agent_id FROM card_hit WHERE card_status = 'verified'),
                      p_agent_id) AS id
    ),
    -- The window starts as computed columns: under row-level security PostgreSQL will not use
    -- "now() - interval" (not leakproof) as an index condition inside the subqueries below,
    -- and would read the agent's whole history.
    window_seconds AS MATERIALIZED (
      SELECT w.s, now() - make_interval(secs => w.s) AS since,
             w.shadow_s, now() - make_interval(secs => w.shadow_s) AS shadow_since,
             now() - interval '60 seconds' AS burst_since
      FROM (SELECT coalesce((SELECT p.velocity_window_seconds FROM policies p
                             WHERE p.status = 'active'), 0) AS s,
                   coalesce((SELECT p.velocity_window_seconds FROM policies p
                             WHERE p.shadow), 0) AS shadow_s) w
    ),
    -- A rule list's window aggregates (`count.<per>.<window>`, `sum.<per>.<window>`,
    -- src/rules/attributes.ts), for the active and the shadow policy: one subquery per subject,
    -- so that each uses its index; OFFSET 0 keeps each window's start a computed column.
    aggregate_specs AS (
      SELECT 'active' AS list, g.spec
      FROM jsonb_array_elements(coalesce((SELECT p.aggregates FROM policies p
                                          WHERE p.status = 'active'), '[]'::jsonb)) g(spec)
      UNION ALL
      SELECT 'shadow', g.spec
      FROM jsonb_array_elements(coalesce((SELECT p.aggregates FROM policies p
                                          WHERE p.shadow), '[]'::jsonb)) g(spec)
    ),
    aggregate_values AS (
      SELECT s.list, s.spec->>'key' AS key,
        CASE s.spec->>'per'
          WHEN 'agent' THEN (
            SELECT CASE WHEN s.spec->>'measure' = 'count' THEN count(*)
                        WHEN p_currency IS NULL THEN NULL
                        ELSE coalesce(sum(h.amount) FILTER (WHERE h.currency = p_currency), 0) END
            FROM assessments h
            WHERE h.agent_id = (SELECT id FROM chosen)
              AND h.livemode = p_livemode AND h.created_at > w.since)
          WHEN 'principal' THEN (
            SELECT CASE WHEN s.spec->>'measure' = 'count' THEN count(*)
                        WHEN p_currency IS NULL THEN NULL
                        ELSE coalesce(sum(h.amount) FILTER (WHERE h.currency = p_currency), 0) END
            FROM assessments h
            WHERE h.agent_id IN (SELECT pa.id FROM agents pa
                                 WHERE pa.principal_id = (SELECT pb.principal_id FROM agents pb
                                                          WHERE pb.id = (SELECT id FROM chosen)))
              AND h.livemode = p_livemode AND h.created_at > w.since)
          ELSE (
            SELECT CASE WHEN s.spec->>'measure' = 'count' THEN count(*)
                        WHEN p_currency IS NULL THEN NULL
                        ELSE coalesce(sum(h.amount) FILTER (WHERE h.currency = p_currency), 0) END
            FROM assessments h
            WHERE h.counterparty = p_counterparty
              AND h.livemode = p_livemode AND h.created_at > w.since)
        END AS value
      FROM aggregate_specs s,
        LATERAL (SELECT now() - make_interval(secs => (s.spec->>'seconds')::int) AS since
                 OFFSET 0) w
    )
    -- One value: every column of a result costs a description of its own over HTTP.
    SELECT json_build_object(
      'key_hit', (SELECT row_to_json(key_hit) FROM key_hit),
      'card_hit', (SELECT row_to_json(card_hit) FROM card_hit),
      'explicit', (SELECT json_build_object('id', a.id, 'status', a.status,
                     'trust_score', a.trust_score, 'risk_tier', a.risk_tier,
                     'card_status', a.card_status)
                   FROM agents a WHERE a.id = p_agent_id),
      'agent', (SELECT json_build_object('id', a.id, 'status', a.status,
                  'trust_score', a.trust_score, 'risk_tier', a.risk_tier,
                  'card_status', a.card_status)
                FROM agents a WHERE a.id = (SELECT id FROM chosen)),
      'history', (SELECT json_build_object(
         'window_count', CASE WHEN w.s = 0 THEN 0 ELSE (
           SELECT count(*) FROM assessments h
           WHERE h.agent_id = c.id AND h.livemode = p_livemode
             AND h.created_at > w.since) END,
         'burst', (SELECT count(*) FROM assessments h
           WHERE h.agent_id = c.id AND h.livemode = p_livemode
             AND h.created_at > w.burst_since),
         -- Bounded reads: the model needs "a few approvals" and a recent median, not all history.
         'approved_count', (SELECT count(*) FROM (SELECT 1 FROM assessments h
           WHERE h.agent_id = c.id AND h.livemode = p_livemode AND h.decision = 'approve'
           LIMIT 1000) n),
         'median_amount', (SELECT percentile_disc(0.5) WITHIN GROUP (ORDER BY r.amount)
           FROM (SELECT h.amount FROM assessments h
                 WHERE h.agent_id = c.id AND h.livemode = p_livemode AND h.decision = 'approve'
                   AND h.currency = p_currency
                 ORDER BY h.created_at DESC LIMIT 200) r),
         -- Paid (or contacted) before means an approved action, not a refused attempt.
         'counterparty_seen', exists (SELECT 1 FROM assessments h
           WHERE h.agent_id = c.id AND h.livemode = p_livemode AND h.decision = 'approve'
             AND h.counterparty = p_counterparty))
       FROM chosen c, window_seconds w
       WHERE c.id IS NOT NULL),
      -- The shadow policy's velocity window, counted only when it has one.
      'shadow_window_count', (SELECT CASE WHEN w.shadow_s = 0 THEN 0 ELSE (
         SELECT count(*) FROM assessments h
         WHERE h.agent_id = c.id AND h.livemode = p_livemode
           AND h.created_at > w.shadow_since) END
       FROM chosen c, window_seconds w
       WHERE c.id IS NOT NULL),
      -- '{}' (nothing counted) for a rule list without window aggregates: most policies.
      'aggregates', (SELECT coalesce(json_object_agg(v.key, v.value), '{}'::json)
                     FROM aggregate_values v WHERE v.list = 'active'),
      'shadow_aggregates', (SELECT coalesce(json_object_agg(v.key, v.value), '{}'::json)
                            FROM aggregate_values v WHERE v.list = 'shadow'),
      'policy', (SELECT json_build_object('id', p.id, 'version', p.version, 'rules', p.rules)
                 FROM policies p WHERE p.status = 'active'),
      'shadow_policy', (SELECT json_build_object('id', p.id, 'version', p.version, 'rules', p.rules)
                        FROM policies p WHERE p.shadow),
      -- The spend guard's state: the org's plan, cap and this period's meter
      -- (src/billing/guard.ts, SPEND_STATE_SQL, for the same row read alone).
      'spend', (SELECT row_to_json(s) FROM (
         SELECT coalesce(b.plan, 'free') AS plan, b.spending_cap,
                coalesce(u.assessments, 0) AS assessments,
                to_char(p.start, 'YYYY-MM-DD') AS period_start
         FROM (SELECT (date_trunc('month', now() AT TIME ZONE 'UTC'))::date AS start) p
         LEFT JOIN billing_accounts b ON true
         LEFT JOIN billing_usage u ON u.period_start = p.start) s))
    -- A replay answers its stored row: no history, aggregates or policy to compute or decode.
    WHERE NOT (SELECT yes FROM replayed)
  );
END
$$;
--> statement-breakpoint
REVOKE ALL ON FUNCTION assess_context(text, boolean, text, text, uuid, text, text) FROM PUBLIC;
--> statement-breakpoint
GRANT EXECUTE ON FUNCTION assess_context(text, boolean, text, text, uuid, text, text) TO app_user;
