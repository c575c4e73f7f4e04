-- Reported effects are immutable records: SELECT and INSERT only. No UPDATE, no DELETE.
GRANT SELECT, INSERT ON control_effects TO app_user;
--> statement-breakpoint
ALTER TABLE control_effects ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE control_effects FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY control_effects_tenant ON control_effects
  USING (org_id = nullif(current_setting('app.org_id', true), '')::uuid)
  WITH CHECK (org_id = nullif(current_setting('app.org_id', true), '')::uuid);
