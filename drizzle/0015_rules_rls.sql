-- Evaluation sets are created and deleted (the only DELETE they need); evaluations are
-- immutable records: SELECT and INSERT only.
GRANT SELECT, INSERT, DELETE ON eval_sets TO app_user;
--> statement-breakpoint
GRANT SELECT, INSERT ON evals TO app_user;
--> statement-breakpoint
ALTER TABLE eval_sets ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE eval_sets FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE evals ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE evals FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY eval_sets_tenant ON eval_sets
  USING (org_id = nullif(current_setting('app.org_id', true), '')::uuid)
  WITH CHECK (org_id = nullif(current_setting('app.org_id', true), '')::uuid);
--> statement-breakpoint
CREATE POLICY evals_tenant ON evals
  USING (org_id = nullif(current_setting('app.org_id', true), '')::uuid)
  WITH CHECK (org_id = nullif(current_setting('app.org_id', true), '')::uuid);
