-- A session's head moves (UPDATE); its events are immutable records: SELECT and INSERT only.
-- No DELETE anywhere.
GRANT SELECT, INSERT, UPDATE ON sessions TO app_user;
--> statement-breakpoint
GRANT SELECT, INSERT ON session_events TO app_user;
--> statement-breakpoint
ALTER TABLE sessions ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE sessions FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE session_events ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE session_events FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY sessions_tenant ON sessions
  USING (org_id = nullif(current_setting('app.org_id', true), '')::uuid)
  WITH CHECK (org_id = nullif(current_setting('app.org_id', true), '')::uuid);
--> statement-breakpoint
CREATE POLICY session_events_tenant ON session_events
  USING (org_id = nullif(current_setting('app.org_id', true), '')::uuid)
  WITH CHECK (org_id = nullif(current_setting('app.org_id', true), '')::uuid);
