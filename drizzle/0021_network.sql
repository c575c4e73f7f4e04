ALTER TABLE "assessments" ADD COLUMN "network" jsonb;--> statement-breakpoint
ALTER TABLE "assessments" ADD COLUMN "network_ids" jsonb;--> statement-breakpoint

-- ---------------------------------------------------------------------------------------------
-- Network signals (issue 41; docs/network.md; docs/architecture.md, "ADR: the learned model and
-- network signals on the assess path", point 7). What one org's confirmed fraud teaches the
-- others, opt-in, as counts of keyed digests: no org's role can read these tables (no grant, no
-- row-level security to get wrong); every read and write goes through the SECURITY DEFINER
-- functions below, each scoped to the calling org (`app.org_id`) and its mode.
-- ---------------------------------------------------------------------------------------------

-- An org's membership per mode: off by default (no row), `consume` only with `contribute`.
-- `excluded_at`: an operator's exclusion (scripts/network-exclude.ts): its contributions stop
-- counting at once and it consumes nothing. The label precision is recomputed by the sweep
-- (network_refresh_precision). The cursors are how far its payments and labels (their
-- `created_at`) have been contributed.
CREATE TABLE network_members (
  org_id uuid NOT NULL REFERENCES organizations (id),
  livemode boolean NOT NULL,
  contribute boolean NOT NULL DEFAULT false,
  consume boolean NOT NULL DEFAULT false,
  excluded_at timestamptz,
  excluded_reason text,
  label_precision real,
  label_overlap integer NOT NULL DEFAULT 0,
  payments_through timestamptz,
  labels_through timestamptz,
  swept_at timestamptz,
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (org_id, livemode),
  CONSTRAINT network_members_consume_check CHECK (contribute OR NOT consume)
);
--> statement-breakpoint
-- One row per (mode, network key, kind, digest, day, org): whatever an org sends, one org moves
-- a digest's count for a day by at most one (the poisoning bound). `seen`: a payment to or by
-- it that day; `fraud` / `legitimate`: a label of that kind became known that day.
CREATE TABLE network_contributions (
  livemode boolean NOT NULL,
  key_id text NOT NULL,
  kind text NOT NULL,
  digest text NOT NULL,
  day date NOT NULL,
  org_id uuid NOT NULL,
  seen boolean NOT NULL DEFAULT false,
  fraud boolean NOT NULL DEFAULT false,
  legitimate boolean NOT NULL DEFAULT false,
  PRIMARY KEY (livemode, key_id, kind, digest, day, org_id),
  CONSTRAINT network_contributions_kind_check
    CHECK (kind IN ('payee', 'agent_key', 'issuer', 'instrument'))
);
--> statement-breakpoint
CREATE INDEX network_contributions_org_idx ON network_contributions (org_id, livemode);
--> statement-breakpoint
CREATE INDEX network_contributions_day_idx ON network_contributions (day);
--> statement-breakpoint
REVOKE ALL ON network_members, network_contributions FROM PUBLIC;
--> statement-breakpoint

-- The calling org's membership of a mode: {contribute, consume, excluded, updated_at}.
CREATE FUNCTION network_settings_read(p_livemode boolean) RETURNS json
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp AS $$
  SELECT json_build_object(
    'contribute', coalesce(m.contribute, false),
    'consume', coalesce(m.consume, false),
    'excluded', m.excluded_at IS NOT NULL,
    'updated_at', m.updated_at)
  FROM (SELECT nullif(current_setting('app.org_id', true), '')::uuid AS org_id) o
  LEFT JOIN network_members m ON m.org_id = o.org_id AND m.livemode = p_livemode
  WHERE o.org_id IS NOT NULL
$$;
--> statement-breakpoint
-- Sets the calling org's membership of a mode. Leaving (`contribute` false) deletes everything
-- the org contributed in that mode and resets its cursors: joining again contributes its
-- history anew. Answers the settings as network_settings_read does.
CREATE FUNCTION network_settings_write(p_livemode boolean, p_contribute boolean, p_consume boolean)
RETURNS json
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE
  v_org uuid := nullif(current_setting('app.org_id', true), '')::uuid;
BEGIN
  IF v_org IS NULL THEN
    RAISE EXCEPTION 'no org in scope';
  END IF;
  INSERT INTO network_members AS m (org_id, livemode, contribute, consume, updated_at)
  VALUES (v_org, p_livemode, p_contribute, p_consume AND p_contribute, now())
  ON CONFLICT (org_id, livemode) DO UPDATE SET
    contribute = EXCLUDED.contribute,
    consume = EXCLUDED.consume,
    payments_through = CASE WHEN EXCLUDED.contribute THEN m.payments_through END,
    labels_through = CASE WHEN EXCLUDED.contribute THEN m.labels_through END,
    updated_at = now();
  IF NOT p_contribute THEN
    DELETE FROM network_contributions c WHERE c.org_id = v_org AND c.livemode = p_livemode;
  END IF;
  RETURN network_settings_read(p_livemode);
END
$$;
--> statement-breakpoint
-- The calling org's contribution cursors of a mode (null when it does not contribute, or is
-- excluded): {payments_through, labels_through}.
CREATE FUNCTION network_cursors(p_livemode boolean) RETURNS json
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp AS $$
  SELECT json_build_object('payments_through', m.payments_through,
                           'labels_through', m.labels_through)
  FROM network_members m
  WHERE m.org_id = nullif(current_setting('app.org_id', true), '')::uuid
    AND m.livemode = p_livemode AND m.contribute AND m.excluded_at IS NULL
$$;
--> statement-breakpoint
-- Adds the calling org's contributions (`[{kind, key_id, digest, day, seen, fraud,
-- legitimate}]`) and moves its cursors, in one statement: nothing when the org does not
-- contribute or is excluded. Rows of one call that name the same (key, kind, digest, day) are
-- merged first; a stored row only gains flags. Answers the number of rows written (-1 when the
-- org does not contribute).
CREATE FUNCTION network_contribute(
  p_livemode boolean,
  p_rows json,
  p_payments_through timestamptz,
  p_labels_through timestamptz
) RETURNS integer
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE
  v_org uuid := nullif(current_setting('app.org_id', true), '')::uuid;
  v_written integer;
BEGIN
  UPDATE network_members m SET
    payments_through = coalesce(p_payments_through, m.payments_through),
    labels_through = coalesce(p_labels_through, m.labels_through)
  WHERE m.org_id = v_org AND m.livemode = p_livemode AND m.contribute AND m.excluded_at IS NULL;
  IF NOT FOUND THEN
    RETURN -1;
  END IF;
  INSERT INTO network_contributions AS c
    (livemode, key_id, kind, digest, day, org_id, seen, fraud, legitimate)
  SELECT p_livemode, r.key_id, r.kind, r.digest, r.day, v_org,
         coalesce(bool_or(r.seen), false), coalesce(bool_or(r.fraud), false),
         coalesce(bool_or(r.legitimate), false)
  FROM json_to_recordset(p_rows)
    AS r(kind text, key_id text, digest text, day date, seen boolean, fraud boolean,
         legitimate boolean)
  -- Retention: nothing older than 180 days is kept, so nothing older is taken.
  WHERE r.day > current_date - 180
  GROUP BY r.key_id, r.kind, r.digest, r.day
  ON CONFLICT (livemode, key_id, kind, digest, day, org_id) DO UPDATE SET
    seen = c.seen OR EXCLUDED.seen,
    fraud = c.fraud OR EXCLUDED.fraud,
    legitimate = c.legitimate OR EXCLUDED.legitimate;
  GET DIAGNOSTICS v_written = ROW_COUNT;
  RETURN v_written;
END
$$;
--> statement-breakpoint
-- What the network knows of some digests (`[[kind, digest], …]`, under key `p_key_id`) in the
-- 30 days to `p_as_of`, for the calling org: NULL when the org does not consume (or is
-- excluded); else `[{kind, digest, orgs, fraud_orgs, legitimate_orgs}]`, one item per digest
-- asked, where `orgs` counts the other orgs (never the caller) that contribute to the mode, are
-- not excluded and sent anything about it in the window. Below `p_k` (never below 3) orgs every
-- count reads 0: no answer tells what fewer than k other orgs did. `fraud_orgs` weighs each org
-- by its label precision once it has 20 overlapping digests (docs/network.md, "Poisoning"),
-- rounded to the nearest whole org; `legitimate_orgs` is a plain count.
CREATE FUNCTION network_signals(
  p_livemode boolean,
  p_as_of timestamptz,
  p_k integer,
  p_key_id text,
  p_digests json
) RETURNS json
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp AS $$
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
$$;
--> statement-breakpoint
-- The same counts for one kind of digest as a day-by-day series, for training and backtests:
-- for each digest asked and each day of [p_from, p_to], the counts a request on that day would
-- have read (the 30 days to it, k applied, the caller excluded):
-- `[{digest, day, orgs, fraud_orgs, legitimate_orgs}]`, days with nothing omitted. NULL when
-- the org does not consume.
CREATE FUNCTION network_signal_series(
  p_livemode boolean,
  p_k integer,
  p_key_id text,
  p_kind text,
  p_digests text[],
  p_from date,
  p_to date
) RETURNS json
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp AS $$
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
  rows AS (
    SELECT c.digest, c.day, c.org_id, o.weight, c.fraud, c.legitimate
    FROM network_contributions c
    JOIN others o ON o.org_id = c.org_id
    WHERE c.livemode = p_livemode AND c.key_id = p_key_id AND c.kind = p_kind
      AND c.digest = ANY (p_digests) AND c.day > p_from - 30 AND c.day <= p_to
  ),
  days AS (
    SELECT DISTINCT r.digest, d.day::date AS day
    FROM rows r, generate_series(r.day, least(r.day + 29, p_to), interval '1 day') d(day)
    WHERE d.day >= p_from
  ),
  per_org AS (
    SELECT d.digest, d.day, r.org_id, r.weight,
           bool_or(r.fraud) AS fraud, bool_or(r.legitimate) AS legitimate
    FROM days d
    JOIN rows r ON r.digest = d.digest AND r.day > d.day - 30 AND r.day <= d.day
    GROUP BY d.digest, d.day, r.org_id, r.weight
  ),
  counted AS (
    SELECT p.digest, p.day, count(*)::integer AS orgs,
           round(coalesce(sum(p.weight) FILTER (WHERE p.fraud), 0))::integer AS fraud_orgs,
           (count(*) FILTER (WHERE p.legitimate))::integer AS legitimate_orgs
    FROM per_org p
    GROUP BY p.digest, p.day
  )
  SELECT coalesce(json_agg(json_build_object(
           'digest', c.digest, 'day', to_char(c.day, 'YYYY-MM-DD'), 'orgs', c.orgs,
           'fraud_orgs', c.fraud_orgs, 'legitimate_orgs', c.legitimate_orgs)
         ORDER BY c.digest, c.day), '[]'::json)
  FROM counted c
  WHERE c.orgs >= greatest(p_k, 3) AND exists (SELECT 1 FROM me)
  HAVING exists (SELECT 1 FROM me)
$$;
--> statement-breakpoint
-- The sweep (every minute, src/network/sweep.ts): the contributing members whose last sweep is
-- older than `p_every_seconds`, oldest first, stamped as swept; one Queue message each.
CREATE FUNCTION network_members_due(p_max integer, p_every_seconds integer)
RETURNS TABLE (org_id uuid, livemode boolean)
LANGUAGE sql VOLATILE SECURITY DEFINER SET search_path = public, pg_temp AS $$
  WITH due AS (
    SELECT m.org_id, m.livemode FROM network_members m
    WHERE m.contribute AND m.excluded_at IS NULL
      AND (m.swept_at IS NULL OR m.swept_at < now() - make_interval(secs => p_every_seconds))
    ORDER BY m.swept_at NULLS FIRST, m.org_id
    LIMIT p_max
    FOR UPDATE SKIP LOCKED
  )
  UPDATE network_members m SET swept_at = now()
  FROM due WHERE m.org_id = due.org_id AND m.livemode = due.livemode
  RETURNING m.org_id, m.livemode
$$;
--> statement-breakpoint
-- Retention (180 days) and every member's label precision: of the digests it marked fraud in
-- the retained window that another contributing org also labelled, the share another org also
-- marked fraud. Answers the rows aged out.
CREATE FUNCTION network_maintain() RETURNS integer
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE
  v_aged integer;
BEGIN
  DELETE FROM network_contributions c WHERE c.day <= current_date - 180;
  GET DIAGNOSTICS v_aged = ROW_COUNT;
  WITH marked AS (
    SELECT DISTINCT c.org_id, c.livemode, c.key_id, c.kind, c.digest
    FROM network_contributions c WHERE c.fraud
  ),
  judged AS (
    SELECT k.org_id, k.livemode,
           bool_or(o.fraud) AS confirmed, bool_or(o.fraud OR o.legitimate) AS labelled
    FROM marked k
    JOIN network_contributions o
      ON o.livemode = k.livemode AND o.key_id = k.key_id AND o.kind = k.kind
     AND o.digest = k.digest AND o.org_id <> k.org_id
    JOIN network_members om ON om.org_id = o.org_id AND om.livemode = o.livemode
     AND om.contribute AND om.excluded_at IS NULL
    GROUP BY k.org_id, k.livemode, k.key_id, k.kind, k.digest
  ),
  precision_of AS (
    SELECT j.org_id, j.livemode, count(*) FILTER (WHERE j.labelled) AS overlap,
           (count(*) FILTER (WHERE j.confirmed))::real
             / nullif(count(*) FILTER (WHERE j.labelled), 0) AS precision
    FROM judged j GROUP BY j.org_id, j.livemode
  )
  UPDATE network_members m SET
    label_overlap = coalesce(p.overlap, 0),
    label_precision = p.precision
  FROM network_members m2
  LEFT JOIN precision_of p ON p.org_id = m2.org_id AND p.livemode = m2.livemode
  WHERE m.org_id = m2.org_id AND m.livemode = m2.livemode;
  RETURN v_aged;
END
$$;
--> statement-breakpoint
REVOKE ALL ON FUNCTION network_settings_read(boolean), network_settings_write(boolean, boolean, boolean),
  network_cursors(boolean), network_contribute(boolean, json, timestamptz, timestamptz),
  network_signals(boolean, timestamptz, integer, text, json),
  network_signal_series(boolean, integer, text, text, text[], date, date),
  network_members_due(integer, integer), network_maintain() FROM PUBLIC;
--> statement-breakpoint
GRANT EXECUTE ON FUNCTION network_settings_read(boolean), network_settings_write(boolean, boolean, boolean),
  network_cursors(boolean), network_contribute(boolean, json, timestamptz, timestamptz),
  network_signals(boolean, timestamptz, integer, text, json),
  network_signal_series(boolean, integer, text, text, text[], date, date),
  network_members_due(integer, integer), network_maintain() TO app_user;
