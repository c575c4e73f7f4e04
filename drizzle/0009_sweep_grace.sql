-- The anchoring sweep is the backstop for lost ledger alarms. It now leaves an org to its own
-- alarm until its oldest unanchored entry has waited longer than the alarm's delay (the caller
-- passes that instant), and takes the longest-waiting orgs first, so no org can be starved by
-- a crowd of newly active ones.
DROP FUNCTION ledger_orgs_awaiting_checkpoint(integer);
--> statement-breakpoint
CREATE FUNCTION ledger_orgs_awaiting_checkpoint(max_orgs integer, waiting_since timestamptz)
RETURNS TABLE (org_id uuid)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp AS $$
  SELECT e.org_id FROM audit_entries e
  LEFT JOIN (
    SELECT c.org_id, max(c.tree_size) AS covered FROM audit_checkpoints c GROUP BY c.org_id
  ) anchored ON anchored.org_id = e.org_id
  WHERE e.sequence > coalesce(anchored.covered, 0)
  GROUP BY e.org_id
  HAVING min(e.time) < waiting_since
  ORDER BY min(e.time), e.org_id
  LIMIT max_orgs
$$;
--> statement-breakpoint
REVOKE ALL ON FUNCTION ledger_orgs_awaiting_checkpoint(integer, timestamptz) FROM PUBLIC;
--> statement-breakpoint
GRANT EXECUTE ON FUNCTION ledger_orgs_awaiting_checkpoint(integer, timestamptz) TO app_user;
