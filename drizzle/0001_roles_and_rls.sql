-- The Worker connects as app_user: it owns nothing and cannot bypass row-level security.
-- Roles are cluster-wide, so another database on the same server may already have made it.
DO $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'app_user') THEN
    CREATE ROLE app_user NOLOGIN NOBYPASSRLS;
  END IF;
END
$$;
--> statement-breakpoint
GRANT USAGE ON SCHEMA public TO app_user;
--> statement-breakpoint
-- No DELETE anywhere: keys are revoked, never removed, so their history stays auditable.
GRANT SELECT, INSERT, UPDATE ON users, organizations, memberships, api_keys TO app_user;
--> statement-breakpoint
ALTER TABLE users ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE users FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE organizations ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE organizations FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE memberships ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE memberships FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE api_keys ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE api_keys FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
-- A session sees its own user row only (app.user_subject is the verified JWT `sub`).
CREATE POLICY users_self ON users
  USING (idp_subject = nullif(current_setting('app.user_subject', true), ''))
  WITH CHECK (idp_subject = nullif(current_setting('app.user_subject', true), ''));
--> statement-breakpoint
CREATE POLICY organizations_tenant ON organizations
  USING (id = nullif(current_setting('app.org_id', true), '')::uuid)
  WITH CHECK (id = nullif(current_setting('app.org_id', true), '')::uuid);
--> statement-breakpoint
-- A session may see the orgs it belongs to before it has picked one.
CREATE POLICY organizations_member ON organizations FOR SELECT
  USING (id IN (
    SELECT m.org_id FROM memberships m JOIN users u ON u.id = m.user_id
    WHERE u.idp_subject = nullif(current_setting('app.user_subject', true), '')
  ));
--> statement-breakpoint
CREATE POLICY memberships_tenant ON memberships
  USING (org_id = nullif(current_setting('app.org_id', true), '')::uuid)
  WITH CHECK (org_id = nullif(current_setting('app.org_id', true), '')::uuid);
--> statement-breakpoint
CREATE POLICY memberships_self ON memberships FOR SELECT
  USING (user_id IN (
    SELECT id FROM users WHERE idp_subject = nullif(current_setting('app.user_subject', true), '')
  ));
--> statement-breakpoint
CREATE POLICY api_keys_tenant ON api_keys
  USING (org_id = nullif(current_setting('app.org_id', true), '')::uuid)
  WITH CHECK (org_id = nullif(current_setting('app.org_id', true), '')::uuid);
--> statement-breakpoint
-- Authentication looks a key up by its hash before the org is known; knowing the hash means
-- holding the key, so this reveals nothing to anyone who could not already use it.
CREATE POLICY api_keys_by_hash ON api_keys FOR SELECT
  USING (key_hash = nullif(current_setting('app.api_key_hash', true), ''));
