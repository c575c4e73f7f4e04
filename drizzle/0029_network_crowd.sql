-- Issue 41's k, as the issue words it: "A count is released only when at least k = 3 distinct
-- orgs contributed to it ... and the querying org's own contribution is subtracted". 0021/0022
-- released a count only from k *other* orgs, so in the issue's own three-org benchmark no org
-- ever read a count. Now the crowd a count needs is every contributing org that sent anything
-- about the digest in the window, the reader included when it did (`crowd`); what the reader
-- reads still counts the others only (`orgs`, `fraud_orgs`, `legitimate_orgs`). An operator who
-- wants k others sets NETWORK_K one higher (docs/network.md, "Counts, k-anonymous").
-- Both functions are replaced whole (a replaced SQL function has no other form).
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
    -- The digests the reader itself sent anything about in the window: it is one of the crowd
    -- its answer needs, never one of the counts it reads.
    mine AS (
      SELECT DISTINCT c.kind, c.digest
      FROM wanted w
      JOIN network_contributions c
        ON c.livemode = p_livemode AND c.key_id = p_key_id AND c.kind = w.kind
       AND c.digest = w.digest
       AND c.day > (p_as_of AT TIME ZONE 'UTC')::date - 30
       AND c.day <= (p_as_of AT TIME ZONE 'UTC')::date
       AND c.org_id = (SELECT org_id FROM me)
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
             (count(p.org_id) + CASE WHEN EXISTS (
                SELECT 1 FROM mine x WHERE x.kind = w.kind AND x.digest = w.digest)
              THEN 1 ELSE 0 END)::integer AS crowd,
             round(coalesce(sum(p.weight) FILTER (WHERE p.fraud), 0))::integer AS fraud_orgs,
             (count(*) FILTER (WHERE p.legitimate))::integer AS legitimate_orgs
      FROM wanted w
      LEFT JOIN per_org p ON p.kind = w.kind AND p.digest = w.digest
      GROUP BY w.kind, w.digest
    )
    SELECT coalesce(json_agg(json_build_object(
             'kind', c.kind, 'digest', c.digest,
             'orgs', CASE WHEN c.crowd >= greatest(p_k, 3) THEN c.orgs ELSE 0 END,
             'fraud_orgs', CASE WHEN c.crowd >= greatest(p_k, 3) THEN c.fraud_orgs ELSE 0 END,
             'legitimate_orgs', CASE WHEN c.crowd >= greatest(p_k, 3) THEN c.legitimate_orgs ELSE 0 END)
           ORDER BY c.kind, c.digest), '[]'::json)
    FROM counted c
    WHERE exists (SELECT 1 FROM me)
    HAVING exists (SELECT 1 FROM me)
  );
END
$$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION network_signal_series(
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
  -- The days the reader itself sent anything about a digest: it counts in the crowd only.
  mine AS (
    SELECT DISTINCT c.digest, c.day
    FROM network_contributions c
    WHERE c.livemode = p_livemode AND c.key_id = p_key_id AND c.kind = p_kind
      AND c.digest = ANY (p_digests) AND c.day > p_from - 30 AND c.day <= p_to
      AND c.org_id = (SELECT org_id FROM me)
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
           (count(*) + CASE WHEN EXISTS (
              SELECT 1 FROM mine x
              WHERE x.digest = p.digest AND x.day > p.day - 30 AND x.day <= p.day)
            THEN 1 ELSE 0 END)::integer AS crowd,
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
  WHERE c.crowd >= greatest(p_k, 3) AND exists (SELECT 1 FROM me)
  HAVING exists (SELECT 1 FROM me)
$$;
