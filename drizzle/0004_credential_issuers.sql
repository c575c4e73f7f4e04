CREATE TABLE "credential_issuers" (
	"id" uuid PRIMARY KEY NOT NULL,
	"org_id" uuid DEFAULT nullif(current_setting('app.org_id', true), '')::uuid NOT NULL,
	"name" text NOT NULL,
	"jwks" jsonb,
	"jwks_url" text,
	"principal_id" uuid,
	"status" text DEFAULT 'active' NOT NULL,
	"fetched_jwks" jsonb,
	"fetched_at" timestamp (3) with time zone,
	"etag" text,
	"fetch_attempted_at" timestamp (3) with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"revoked_at" timestamp with time zone,
	CONSTRAINT "credential_issuers_status_check" CHECK ("credential_issuers"."status" in ('active', 'revoked')),
	CONSTRAINT "credential_issuers_keys_check" CHECK (("credential_issuers"."jwks" is null) <> ("credential_issuers"."jwks_url" is null)),
	CONSTRAINT "credential_issuers_revoked_check" CHECK (("credential_issuers"."status" = 'revoked') = ("credential_issuers"."revoked_at" is not null))
);
--> statement-breakpoint
ALTER TABLE "credential_issuers" ADD CONSTRAINT "credential_issuers_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "credential_issuers" ADD CONSTRAINT "credential_issuers_principal_fk" FOREIGN KEY ("org_id","principal_id") REFERENCES "public"."principals"("org_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "credential_issuers_status_idx" ON "credential_issuers" USING btree ("org_id","status","id");--> statement-breakpoint

-- ---------------------------------------------------------------------------------------------
-- Credential issuers: who may sign the root of an AP2 credential chain (docs/credentials.md)
-- ---------------------------------------------------------------------------------------------

-- No DELETE: an issuer is revoked, never removed (its id stays in the outcomes it verified).
GRANT SELECT, INSERT, UPDATE ON credential_issuers TO app_user;
--> statement-breakpoint
ALTER TABLE credential_issuers ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE credential_issuers FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY credential_issuers_tenant ON credential_issuers
  USING (org_id = nullif(current_setting('app.org_id', true), '')::uuid)
  WITH CHECK (org_id = nullif(current_setting('app.org_id', true), '')::uuid);
