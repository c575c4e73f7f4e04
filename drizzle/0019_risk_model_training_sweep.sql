-- Risk models whose training never finished (docs/risk-model.md, "Retries: never stuck in
-- `training`"): the Cron sweep's read across orgs, which no org's row-level security allows.
-- A model in `training` longer than `older_than_seconds` lost its message (every other path
-- settles it within minutes: the consumer's retries, the dead-letter queue); the sweep marks it
-- `failed` through each org's ledger. Ids only: the sweep reads the rest in the org.
--
-- The function runs as its owner (the migration role), and FORCE applies to owners too: this
-- policy lets it see the models in training, and nothing else, across orgs.
CREATE POLICY risk_models_owner_sweep ON risk_models FOR SELECT TO CURRENT_USER
  USING (status = 'training');
--> statement-breakpoint
CREATE FUNCTION risk_models_training_stale(older_than_seconds integer, max_rows integer)
RETURNS TABLE (id uuid, org_id uuid)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp AS $$
  SELECT m.id, m.org_id FROM risk_models m
  WHERE m.status = 'training'
    AND m.created_at < now() - make_interval(secs => older_than_seconds)
  ORDER BY m.created_at
  LIMIT max_rows
$$;
--> statement-breakpoint
REVOKE ALL ON FUNCTION risk_models_training_stale(integer, integer) FROM PUBLIC;
--> statement-breakpoint
GRANT EXECUTE ON FUNCTION risk_models_training_stale(integer, integer) TO app_user;
