-- persist_assessment with one argument more, `p_review_recheck`: what approving a review item
-- of a verified AP2 credential re-checks (src/schemas/reviews.ts `ReviewRecheck`, written to
-- `reviews.recheck`, 0013; docs/reviews.md, "Re-checked on approval"). Otherwise the function of
-- 0012, unchanged.
--
-- An overload beside 0012's, not a replacement (docs/deploy.md, "Upgrades"): the Worker running
-- while this migrates calls the 14 arguments and still finds its function; this release's calls
-- the 15. The 14-argument function is dropped a release later.
CREATE FUNCTION persist_assessment(
  p_org_id uuid,
  p_livemode boolean,
  p_created timestamptz,
  p_content_hash text,
  p_row json,
  p_mandate json,
  p_events json,
  p_spend_review_event_id uuid,
  p_review_id uuid,
  p_review_spend jsonb,
  p_review_recheck jsonb,
  p_prices jsonb,
  p_currency text,
  p_review_threshold_percent integer,
  p_review_sla_default_seconds integer
) RETURNS TABLE (inserted uuid, stored uuid)
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = public, pg_temp
SET plan_cache_mode = force_generic_plan
SET jit = off
AS $$
BEGIN
  RETURN QUERY
    WITH period AS (
      SELECT (date_trunc('month', now() AT TIME ZONE 'UTC'))::date AS start
    ),
    refused AS (
      -- A live assessment past the cap; the meter row is this org's, written only here.
      SELECT p_livemode AND coalesce((
        SELECT greatest(0, coalesce(u.assessments, 0) + 1 - (price->>'included')::bigint)
                 * (price->>'unit_amount')::bigint > b.spending_cap
        FROM billing_accounts b
        CROSS JOIN period p
        LEFT JOIN billing_usage u ON u.period_start = p.start
        CROSS JOIN LATERAL (SELECT coalesce(p_prices->b.plan, p_prices->'free') AS price) x
        WHERE b.spending_cap IS NOT NULL), false) AS over
    ),
    ins AS (
      INSERT INTO assessments
      SELECT * FROM json_populate_record(null::assessments, p_row)
      WHERE NOT (SELECT over FROM refused)
      ON CONFLICT DO NOTHING
      RETURNING id, agent_id, decision, livemode, inputs
    ),
    -- Everything else only with the assessment itself: a plan that loses to another request
    -- (a reused idempotency key) or to the cap leaves no mandate, no event and no count behind.
    m AS (
      INSERT INTO mandates
      SELECT * FROM json_populate_record(null::mandates, p_mandate)
      WHERE exists (SELECT 1 FROM ins)
      ON CONFLICT DO NOTHING
    ),
    ev AS (
      INSERT INTO events
      SELECT * FROM json_populate_recordset(null::events, p_events)
      WHERE exists (SELECT 1 FROM ins)
      ON CONFLICT DO NOTHING
    ),
    -- The meter: one billable (live) assessment, counted only by the call that inserted it.
    meter AS (
      INSERT INTO billing_usage (period_start, assessments)
      SELECT p.start, 1 FROM ins, period p WHERE ins.livemode
      ON CONFLICT (org_id, period_start) DO UPDATE
        SET assessments = billing_usage.assessments + 1, updated_at = now()
      RETURNING period_start, assessments
    ),
    -- The spend guard's warning: usage past the review threshold of the cap, once per period
    -- and cap (the dedupe key), delivered as a webhook like every event.
    spend AS (
      SELECT mt.period_start, mt.assessments, b.plan, b.spending_cap,
             greatest(0, mt.assessments - (price->>'included')::bigint)
               * (price->>'unit_amount')::bigint AS amount_due
      FROM meter mt
      JOIN billing_accounts b ON b.spending_cap IS NOT NULL
      CROSS JOIN LATERAL (SELECT coalesce(p_prices->b.plan, p_prices->'free') AS price) x
    ),
    review AS (
      INSERT INTO events (id, type, data, livemode, dedupe_key)
      SELECT p_spend_review_event_id, 'spend.review_required',
        jsonb_build_object('period_start', s.period_start, 'spending_cap', s.spending_cap,
          'amount_due', s.amount_due, 'currency', p_currency,
          'assessments', s.assessments, 'plan', s.plan,
          'threshold_percent', p_review_threshold_percent),
        true,
        'spend.review_required:' || s.period_start || ':' || s.spending_cap || ':'
          || p_review_threshold_percent
      FROM spend s
      WHERE s.amount_due > 0 AND s.amount_due * 100 >= s.spending_cap * p_review_threshold_percent
      ON CONFLICT DO NOTHING
    ),
    -- A review assessment opens its review item here, with the assessment, so no review is ever
    -- missing and a replayed plan (nothing inserted) never opens a second one.
    opened AS (
      INSERT INTO reviews (id, org_id, assessment_id, livemode, agent_id, created_at, expires_at,
                           spend, recheck)
      SELECT p_review_id, p_org_id, ins.id, ins.livemode, ins.agent_id, p_created,
        p_created + make_interval(secs => coalesce(
          (SELECT rs.sla_seconds FROM review_settings rs), p_review_sla_default_seconds)),
        p_review_spend, p_review_recheck
      FROM ins WHERE ins.decision = 'review' AND p_review_id IS NOT NULL
      ON CONFLICT DO NOTHING
    ),
    -- Test-mode assessments are no evidence about an agent's live trust, nor is an assessment
    -- that named the agent without proof of possession (identity.proven not true: a claim).
    counted AS (
      UPDATE agents a SET
        approvals = a.approvals + (ins.decision = 'approve')::int,
        reviews = a.reviews + (ins.decision = 'review')::int,
        denials = a.denials + (ins.decision = 'deny')::int,
        trust_reason = 'assessment'
      FROM ins WHERE a.id = ins.agent_id AND ins.livemode
        AND coalesce((ins.inputs->'identity'->>'proven')::boolean, false)
    )
    SELECT (SELECT ins.id FROM ins),
      coalesce((SELECT ins.id FROM ins),
        (SELECT x.id FROM assessments x WHERE x.content_hash = p_content_hash));
END
$$;
--> statement-breakpoint
REVOKE ALL ON FUNCTION persist_assessment(uuid, boolean, timestamptz, text, json, json, json,
  uuid, uuid, jsonb, jsonb, jsonb, text, integer, integer) FROM PUBLIC;
--> statement-breakpoint
GRANT EXECUTE ON FUNCTION persist_assessment(uuid, boolean, timestamptz, text, json, json, json,
  uuid, uuid, jsonb, jsonb, jsonb, text, integer, integer) TO app_user;
