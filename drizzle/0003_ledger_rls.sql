-- The ledger is append-only for the application role: no UPDATE, no DELETE. An entry's
-- `pending`/`anchored` status is derived from the checkpoints, so nothing ever needs changing.
GRANT SELECT, INSERT ON audit_entries, audit_checkpoints, events TO app_user;
--> statement-breakpoint
ALTER TABLE audit_entries ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE audit_entries FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE audit_checkpoints ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE audit_checkpoints FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE events ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE events FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY audit_entries_tenant ON audit_entries
  USING (org_id = nullif(current_setting('app.org_id', true), '')::uuid)
  WITH CHECK (org_id = nullif(current_setting('app.org_id', true), '')::uuid);
--> statement-breakpoint
-- Public inclusion proofs are looked up by leaf hash alone; the route returns only the proof.
CREATE POLICY audit_entries_by_leaf ON audit_entries FOR SELECT
  USING (leaf_hash = nullif(current_setting('app.leaf_hash', true), ''));
--> statement-breakpoint
CREATE POLICY audit_checkpoints_tenant ON audit_checkpoints
  USING (org_id = nullif(current_setting('app.org_id', true), '')::uuid)
  WITH CHECK (org_id = nullif(current_setting('app.org_id', true), '')::uuid);
--> statement-breakpoint
-- Signed checkpoints are public by design; they are looked up by their pseudonymous log id.
CREATE POLICY audit_checkpoints_by_log ON audit_checkpoints FOR SELECT
  USING (log_id = nullif(current_setting('app.log_id', true), ''));
--> statement-breakpoint
CREATE POLICY events_tenant ON events
  USING (org_id = nullif(current_setting('app.org_id', true), '')::uuid)
  WITH CHECK (org_id = nullif(current_setting('app.org_id', true), '')::uuid);
--> statement-breakpoint
-- The anchoring sweep (Cron) must find the orgs whose newest entries no checkpoint covers yet.
-- The application role sees that only through a SECURITY DEFINER function that returns org ids
-- and nothing else; these policies let the function's owner (the migration role) read across
-- orgs even where it does not bypass RLS (FORCE applies to owners too).
CREATE POLICY audit_entries_owner_sweep ON audit_entries FOR SELECT TO CURRENT_USER USING (true);
--> statement-breakpoint
CREATE POLICY audit_checkpoints_owner_sweep ON audit_checkpoints FOR SELECT TO CURRENT_USER
  USING (true);
--> statement-breakpoint
CREATE FUNCTION ledger_orgs_awaiting_checkpoint(max_orgs integer)
RETURNS TABLE (org_id uuid)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public AS $$
  SELECT e.org_id FROM audit_entries e
  GROUP BY e.org_id
  HAVING max(e.sequence) > coalesce(
    (SELECT max(c.tree_size) FROM audit_checkpoints c WHERE c.org_id = e.org_id), 0)
  ORDER BY e.org_id
  LIMIT max_orgs
$$;
--> statement-breakpoint
REVOKE ALL ON FUNCTION ledger_orgs_awaiting_checkpoint(integer) FROM PUBLIC;
--> statement-breakpoint
GRANT EXECUTE ON FUNCTION ledger_orgs_awaiting_checkpoint(integer) TO app_user;
