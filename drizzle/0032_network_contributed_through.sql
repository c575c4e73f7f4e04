-- The network settings show how far the org's contributions have reached (`contributed_through`):
-- the instant before which every payment and label of the mode is in the network, the earlier
-- of the two cursors the queue consumer moves (docs/network.md, "How contributions flow"). Null
-- until the first pass after joining ends, and whenever the org does not contribute or is
-- excluded. An owner sees "joined, not yet contributed" from "contributed through 10:02", and a
-- script that imports history knows when the network holds it.
-- Replaced whole (a replaced SQL function has no other form); its grants are kept.
CREATE OR REPLACE FUNCTION network_settings_read(p_livemode boolean) RETURNS json
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp AS $$
  SELECT json_build_object(
    'contribute', coalesce(m.contribute, false),
    'consume', coalesce(m.consume, false),
    'excluded', m.excluded_at IS NOT NULL,
    'updated_at', m.updated_at,
    'contributed_through',
      -- least() skips nulls: both cursors must have moved.
      CASE WHEN m.contribute AND m.excluded_at IS NULL
                AND m.payments_through IS NOT NULL AND m.labels_through IS NOT NULL
           THEN least(m.payments_through, m.labels_through) END)
  FROM (SELECT nullif(current_setting('app.org_id', true), '')::uuid AS org_id) o
  LEFT JOIN network_members m ON m.org_id = o.org_id AND m.livemode = p_livemode
  WHERE o.org_id IS NOT NULL
$$;
