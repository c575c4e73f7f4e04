-- Mandates change state (reservations of uses and amounts, revocation): UPDATE too. Decisions
-- and redemptions are immutable records: SELECT and INSERT only. No DELETE anywhere.
GRANT SELECT, INSERT, UPDATE ON action_mandates TO app_user;
--> statement-breakpoint
GRANT SELECT, INSERT ON action_decisions, action_redemptions TO app_user;
--> statement-breakpoint
ALTER TABLE action_mandates ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE action_mandates FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE action_decisions ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE action_decisions FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE action_redemptions ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE action_redemptions FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY action_mandates_tenant ON action_mandates
  USING (org_id = nullif(current_setting('app.org_id', true), '')::uuid)
  WITH CHECK (org_id = nullif(current_setting('app.org_id', true), '')::uuid);
--> statement-breakpoint
CREATE POLICY action_decisions_tenant ON action_decisions
  USING (org_id = nullif(current_setting('app.org_id', true), '')::uuid)
  WITH CHECK (org_id = nullif(current_setting('app.org_id', true), '')::uuid);
--> statement-breakpoint
CREATE POLICY action_redemptions_tenant ON action_redemptions
  USING (org_id = nullif(current_setting('app.org_id', true), '')::uuid)
  WITH CHECK (org_id = nullif(current_setting('app.org_id', true), '')::uuid);
