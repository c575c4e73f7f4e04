-- Assessments and mandates are immutable records: SELECT and INSERT only. Policies change
-- status on activation: UPDATE too. No DELETE anywhere.
GRANT SELECT, INSERT ON assessments, mandates TO app_user;
--> statement-breakpoint
GRANT SELECT, INSERT, UPDATE ON policies TO app_user;
--> statement-breakpoint
ALTER TABLE assessments ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE assessments FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE mandates ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE mandates FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE policies ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE policies FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY assessments_tenant ON assessments
  USING (org_id = nullif(current_setting('app.org_id', true), '')::uuid)
  WITH CHECK (org_id = nullif(current_setting('app.org_id', true), '')::uuid);
--> statement-breakpoint
CREATE POLICY mandates_tenant ON mandates
  USING (org_id = nullif(current_setting('app.org_id', true), '')::uuid)
  WITH CHECK (org_id = nullif(current_setting('app.org_id', true), '')::uuid);
--> statement-breakpoint
CREATE POLICY policies_tenant ON policies
  USING (org_id = nullif(current_setting('app.org_id', true), '')::uuid)
  WITH CHECK (org_id = nullif(current_setting('app.org_id', true), '')::uuid);
