-- Artifacts are immutable records: SELECT and INSERT only.
GRANT SELECT, INSERT ON artifacts TO app_user;
--> statement-breakpoint
ALTER TABLE artifacts ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE artifacts FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY artifacts_tenant ON artifacts
  USING (org_id = nullif(current_setting('app.org_id', true), '')::uuid)
  WITH CHECK (org_id = nullif(current_setting('app.org_id', true), '')::uuid);
--> statement-breakpoint
-- The public proof of existence (GET /v1/verify/artifact?digest=): whoever names a digest may
-- see the live registrations of exactly that digest, in any org. The route returns only whether
-- one exists and the earliest one's inclusion proof, never its org, name or metadata.
-- Test-mode registrations are never public.
CREATE POLICY artifacts_by_digest ON artifacts FOR SELECT
  USING (livemode AND digest = nullif(current_setting('app.artifact_digest', true), ''));
