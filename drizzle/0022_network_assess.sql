ALTER TABLE "credential_issuers" ADD COLUMN "network_digests" jsonb;--> statement-breakpoint

-- ---------------------------------------------------------------------------------------------
-- Network signals on the assess path (issue 41; docs/architecture.md, "ADR: the learned model and
-- network signals on the assess path", as built). One more statement in the context read's batch,
-- so no round trip of its own: the network's counts for the request's digests, which the Worker
-- computes before the read (payee, agent key, payment instrument), and for the issuer keys the
-- credential's root could be verified with, whose digests the org's issuers keep
-- (`credential_issuers.network_digests`, written when their keys are stored or fetched): the
-- issuer key is only known once the chain verifies, after the read, so the read asks for every
-- active issuer key the root's `kid` names (every key when it names none) and the Worker keeps
-- the verified key's count.
-- ---------------------------------------------------------------------------------------------

-- network_signals as PL/pgSQL, the same answers: the counting query's plan is kept by each
-- database session (as assess_context's, docs/architecture.md, "The assess path"), where the SQL
-- function was planned anew on every call; and an org that does not consume, most of them, is
-- answered NULL before the counting query runs. Measured on this machine's PostgreSQL 15 (2,000
-- calls in a loop): about 0.3 ms a call before for either, 0.02 ms now for an org that does not
-- consume.
CREATE OR REPLACE FUNCTION network_signals(
  p_livemode boolean,
  p_as_of timestamptz,
  p_k integer,
  p_key_id text,
  p_digests json
) RETURNS json
LANGUAGE plpgsql STABLE SECURITY DEFINER
SET search_path = public, pg_temp
AS $$
BEGIN
  IF NOT EXISTS (
    SELECT 1 FROM network_members m
    WHERE m.org_id = nullif(current_setting('app.org_id', true), '')::uuid
      AND m.livemode = p_livemode AND m.consume AND m.excluded_at IS NULL
  ) THEN
    RETURN NULL;
  END IF;
  RETURN (
    WITH me AS (
      SELECT m.org_id FROM network_members m
      WHERE m.org_id = nullif(current_setting('app.org_id', true), '')::uuid
        AND m.livemode = p_livemode AND m.consume AND m.excluded_at IS NULL
    ),
    others AS (
      SELECT m.org_id,
             CASE WHEN m.label_overlap >= 20 THEN coalesce(m.label_precision, 1) ELSE 1 END AS weight
      FROM network_members m
      WHERE m.livemode = p_livemode AND m.contribute AND m.excluded_at IS NULL
        AND m.org_id <> (SELECT org_id FROM me)
    ),
    wanted AS (
      SELECT DISTINCT w.value->>0 AS kind, w.value->>1 AS digest
      FROM json_array_elements(p_digests) w
    ),
    per_org AS (
      SELECT c.kind, c.digest, c.org_id, o.weight,
             bool_or(c.fraud) AS fraud, bool_or(c.legitimate) AS legitimate
      FROM wanted w
      JOIN network_contributions c
        ON c.livemode = p_livemode AND c.key_id = p_key_id AND c.kind = w.kind
       AND c.digest = w.digest
       AND c.day > (p_as_of AT TIME ZONE 'UTC')::date - 30
       AND c.day <= (p_as_of AT TIME ZONE 'UTC')::date
      JOIN others o ON o.org_id = c.org_id
      GROUP BY c.kind, c.digest, c.org_id, o.weight
    ),
    counted AS (
      SELECT w.kind, w.digest, count(p.org_id)::integer AS orgs,
             round(coalesce(sum(p.weight) FILTER (WHERE p.fraud), 0))::integer AS fraud_orgs,
             (count(*) FILTER (WHERE p.legitimate))::integer AS legitimate_orgs
      FROM wanted w
      LEFT JOIN per_org p ON p.kind = w.kind AND p.digest = w.digest
      GROUP BY w.kind, w.digest
    )
    SELECT coalesce(json_agg(json_build_object(
             'kind', c.kind, 'digest', c.digest,
             'orgs', CASE WHEN c.orgs >= greatest(p_k, 3) THEN c.orgs ELSE 0 END,
             'fraud_orgs', CASE WHEN c.orgs >= greatest(p_k, 3) THEN c.fraud_orgs ELSE 0 END,
             'legitimate_orgs', CASE WHEN c.orgs >= greatest(p_k, 3) THEN c.legitimate_orgs ELSE 0 END)
           ORDER BY c.kind, c.digest), '[]'::json)
    FROM counted c
    WHERE exists (SELECT 1 FROM me)
    HAVING exists (SELECT 1 FROM me)
  );
END
$$;
--> statement-breakpoint
-- `network_signals` for one assessment, as of its clock: the request's test clock's frozen time
-- (test mode), else now(); the issuer digests read under the caller's row-level security
-- (SECURITY INVOKER: only the calling org's issuers). NULL when the org's mode does not consume.
CREATE FUNCTION network_context(
  p_livemode boolean,
  p_test_clock uuid,
  p_k integer,
  p_key_id text,
  p_digests json,
  p_issuers boolean,
  p_issuer_kid text
) RETURNS json
-- Names are schema-qualified instead of a pinned search_path: a function with SET clauses pays
-- for them on every call, and this one runs on every assessment.
LANGUAGE plpgsql STABLE SECURITY INVOKER
AS $$
DECLARE
  v_as_of timestamptz := now();
  v_digests json := p_digests;
BEGIN
  IF p_test_clock IS NOT NULL THEN
    -- A clock of another org (or none) is refused by the request itself (assess_context).
    SELECT c.frozen_time INTO v_as_of FROM public.test_clocks c WHERE c.id = p_test_clock;
    IF NOT FOUND THEN
      RETURN NULL;
    END IF;
  END IF;
  IF p_issuers THEN
    SELECT coalesce(json_agg(d.item), '[]'::json) INTO v_digests
    FROM (
      SELECT w.value AS item FROM json_array_elements(p_digests) w
      UNION ALL
      -- Duplicates are harmless: network_signals asks each (kind, digest) once.
      SELECT json_build_array('issuer', e->>'digest')
      FROM public.credential_issuers i, jsonb_array_elements(i.network_digests) e
      WHERE i.status = 'active' AND e->>'key_id' = p_key_id
        AND (p_issuer_kid IS NULL OR e->>'kid' = p_issuer_kid)
    ) d;
  END IF;
  RETURN public.network_signals(p_livemode, v_as_of, p_k, p_key_id, v_digests);
END
$$;
--> statement-breakpoint
REVOKE ALL ON FUNCTION network_context(boolean, uuid, integer, text, json, boolean, text) FROM PUBLIC;
--> statement-breakpoint
GRANT EXECUTE ON FUNCTION network_context(boolean, uuid, integer, text, json, boolean, text) TO app_user;
