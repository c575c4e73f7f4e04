-- The context read on one payment history and one clock (issue 39; docs/architecture.md, "ADR:
-- the learned model and network signals on the assess path").
--
-- 1. Every window, velocity and payee statistic reads `payments` (assessed and imported history
--    alike) instead of `assessments`; a history record has no decision and counts as approved:
--    it happened.
-- 2. One clock: `p_test_clock` names a test clock (test mode; the caller refuses a live key
--    naming one before this read), and every window ends at its frozen time, and nothing after
--    it is seen. Without one the clock is the database's `now()`, as before. The clock's time is
--    returned as `as_of` ('test_clock_missing' when the id names no clock of this org).
-- 3. The active and shadow risk models of the mode: id, version, label delay and thresholds,
--    and their parameters only when the caller's isolate does not hold them already
--    (`p_model_cached`: the ids it holds, comma-separated): no round trip of its own, warm or
--    cold. With a model, the agent's payments of the last 30 days in the request's currency
--    (time, amount, payee) and the payee's payments of the last 30 days plus the label delay
--    (time, and when a fraud or chargeback label on it became known, if by the clock's time),
--    the latest 200 of each: what src/model/features.ts computes the model's inputs from.
DROP FUNCTION assess_context(text, boolean, text, text, uuid, text, text);
--> statement-breakpoint
CREATE FUNCTION assess_context(
  p_content_hash text,
  p_livemode boolean,
  p_thumbprint text,
  p_card_ref text,
  p_agent_id uuid,
  p_currency text,
  p_counterparty text,
  p_test_clock uuid,
  p_model_cached text
) RETURNS json
LANGUAGE plpgsql STABLE SECURITY INVOKER
SET search_path = public, pg_temp
SET plan_cache_mode = force_generic_plan
SET jit = off
AS $$
DECLARE
  v_as_of timestamptz := now();
  v_until timestamptz := 'infinity';
BEGIN
  IF p_test_clock IS NOT NULL THEN
    SELECT c.frozen_time INTO v_as_of FROM test_clocks c WHERE c.id = p_test_clock;
    IF NOT FOUND THEN
      RETURN json_build_object('test_clock_missing', true);
    END IF;
    v_until := v_as_of;
  END IF;
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
      SELECT w.s, v_as_of - make_interval(secs => w.s) AS since,
             w.shadow_s, v_as_of - make_interval(secs => w.shadow_s) AS shadow_since,
             v_as_of - interval '60 seconds' AS burst_since
      FROM (SELECT coalesce((SELECT p.velocity_window_seconds FROM policies p
                             WHERE p.status = 'active'), 0) AS s,
                   coalesce((SELECT p.velocity_window_seconds FROM policies p
                             WHERE p.shadow), 0) AS shadow_s) w
    ),
    -- A rule list's window aggregates (`count.<per>.<window>`, `sum.<per>.<window>`,
    -- src/rules/attributes.ts), for the active and the shadow policy: one subquery per subject,
    -- so that each uses its index; OFFSET 0 keeps each window's start a computed column.
    -- The mode's active and shadow risk models; the parameters only for an isolate without them.
    models AS (
      SELECT m.id, m.status, m.version, m.label_delay_seconds,
             m.metrics->'thresholds' AS thresholds,
             CASE WHEN p_model_cached IS NOT NULL
                       AND m.id::text = ANY (string_to_array(p_model_cached, ','))
                  THEN NULL ELSE m.params END AS params
      FROM risk_models m
      WHERE m.livemode = p_livemode AND m.status IN ('active', 'shadow')
    ),
    horizon AS MATERIALIZED (
      SELECT v_as_of - make_interval(days => 30) AS agent_since,
             v_as_of - make_interval(days => 30)
               - make_interval(secs => (SELECT max(label_delay_seconds) FROM models)) AS payee_since
      WHERE exists (SELECT 1 FROM models)
    ),
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
            FROM payments h
            WHERE h.agent_id = (SELECT id FROM chosen)
              AND h.livemode = p_livemode AND h.occurred_at <= v_until AND h.occurred_at > w.since)
          WHEN 'principal' THEN (
            SELECT CASE WHEN s.spec->>'measure' = 'count' THEN count(*)
                        WHEN p_currency IS NULL THEN NULL
                        ELSE coalesce(sum(h.amount) FILTER (WHERE h.currency = p_currency), 0) END
            FROM payments h
            WHERE h.agent_id IN (SELECT pa.id FROM agents pa
                                 WHERE pa.principal_id = (SELECT pb.principal_id FROM agents pb
                                                          WHERE pb.id = (SELECT id FROM chosen)))
              AND h.livemode = p_livemode AND h.occurred_at <= v_until AND h.occurred_at > w.since)
          ELSE (
            SELECT CASE WHEN s.spec->>'measure' = 'count' THEN count(*)
                        WHEN p_currency IS NULL THEN NULL
                        ELSE coalesce(sum(h.amount) FILTER (WHERE h.currency = p_currency), 0) END
            FROM payments h
            WHERE h.counterparty = p_counterparty
              AND h.livemode = p_livemode AND h.occurred_at <= v_until AND h.occurred_at > w.since)
        END AS value
      FROM aggregate_specs s,
        LATERAL (SELECT v_as_of - make_interval(secs => (s.spec->>'seconds')::int) AS since
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
           SELECT count(*) FROM payments h
           WHERE h.agent_id = c.id AND h.livemode = p_livemode
             AND h.occurred_at <= v_until AND h.occurred_at > w.since) END,
         'burst', (SELECT count(*) FROM payments h
           WHERE h.agent_id = c.id AND h.livemode = p_livemode
             AND h.occurred_at <= v_until AND h.occurred_at > w.burst_since),
         -- Bounded reads: the model needs "a few approvals" and a recent median, not all history.
         'approved_count', (SELECT count(*) FROM (SELECT 1 FROM payments h
           WHERE h.agent_id = c.id AND h.livemode = p_livemode AND coalesce(h.decision, 'approve') = 'approve'
             AND h.occurred_at <= v_until
           LIMIT 1000) n),
         'median_amount', (SELECT percentile_disc(0.5) WITHIN GROUP (ORDER BY r.amount)
           FROM (SELECT h.amount FROM payments h
                 WHERE h.agent_id = c.id AND h.livemode = p_livemode AND coalesce(h.decision, 'approve') = 'approve'
                   AND h.currency = p_currency
                 AND h.occurred_at <= v_until
                 ORDER BY h.occurred_at DESC LIMIT 200) r),
         -- Paid (or contacted) before means an approved action, not a refused attempt.
         'counterparty_seen', exists (SELECT 1 FROM payments h
           WHERE h.agent_id = c.id AND h.livemode = p_livemode AND coalesce(h.decision, 'approve') = 'approve'
             AND h.counterparty = p_counterparty AND h.occurred_at <= v_until))
       FROM chosen c, window_seconds w
       WHERE c.id IS NOT NULL),
      -- The shadow policy's velocity window, counted only when it has one.
      'shadow_window_count', (SELECT CASE WHEN w.shadow_s = 0 THEN 0 ELSE (
         SELECT count(*) FROM payments h
         WHERE h.agent_id = c.id AND h.livemode = p_livemode
           AND h.occurred_at <= v_until AND h.occurred_at > w.shadow_since) END
       FROM chosen c, window_seconds w
       WHERE c.id IS NOT NULL),
      -- '{}' (nothing counted) for a rule list without window aggregates: most policies.
      'aggregates', (SELECT coalesce(json_object_agg(v.key, v.value), '{}'::json)
                     FROM aggregate_values v WHERE v.list = 'active'),
      'shadow_aggregates', (SELECT coalesce(json_object_agg(v.key, v.value), '{}'::json)
                            FROM aggregate_values v WHERE v.list = 'shadow'),
      'as_of', v_as_of,
      'model', (SELECT row_to_json(m) FROM models m WHERE m.status = 'active'),
      'shadow_model', (SELECT row_to_json(m) FROM models m WHERE m.status = 'shadow'),
      -- The model's inputs: [epoch ms, amount, payee] and [epoch ms, fraud known at (epoch ms)].
      'model_agent', (SELECT coalesce(json_agg(json_build_array(r.t, r.amount, r.counterparty)
                                               ORDER BY r.t), '[]'::json)
         FROM (SELECT (extract(epoch FROM h.occurred_at) * 1000)::bigint AS t, h.amount,
                      h.counterparty
               FROM payments h, horizon z, chosen c
               WHERE h.agent_id = c.id AND h.livemode = p_livemode
                 AND h.occurred_at > z.agent_since AND h.occurred_at <= v_until
                 AND h.amount IS NOT NULL AND h.currency IS NOT DISTINCT FROM p_currency
               ORDER BY h.occurred_at DESC LIMIT 200) r),
      'model_payee', (SELECT coalesce(json_agg(json_build_array(r.t, r.known) ORDER BY r.t),
                                      '[]'::json)
         FROM (SELECT (extract(epoch FROM h.occurred_at) * 1000)::bigint AS t,
                      (SELECT (extract(epoch FROM min(l.known_at)) * 1000)::bigint
                       FROM payment_labels l
                       WHERE l.payment_id = h.id AND l.label IN ('fraud', 'chargeback')
                         AND l.known_at <= v_as_of) AS known
               FROM payments h, horizon z
               WHERE p_counterparty IS NOT NULL AND h.counterparty = p_counterparty
                 AND h.livemode = p_livemode
                 AND h.occurred_at > z.payee_since AND h.occurred_at <= v_until
               ORDER BY h.occurred_at DESC LIMIT 200) r),
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
REVOKE ALL ON FUNCTION assess_context(text, boolean, text, text, uuid, text, text, uuid, text) FROM PUBLIC;
--> statement-breakpoint
GRANT EXECUTE ON FUNCTION assess_context(text, boolean, text, text, uuid, text, text, uuid, text) TO app_user;
