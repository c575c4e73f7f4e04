CREATE TABLE "http_signature_nonces" (
	"org_id" uuid DEFAULT nullif(current_setting('app.org_id', true), '')::uuid NOT NULL,
	"livemode" boolean NOT NULL,
	"digest" text NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	CONSTRAINT "http_signature_nonces_org_id_livemode_digest_pk" PRIMARY KEY("org_id","livemode","digest")
);
--> statement-breakpoint
ALTER TABLE "assessments" ADD COLUMN "http_signature" jsonb;--> statement-breakpoint
ALTER TABLE "http_signature_nonces" ADD CONSTRAINT "http_signature_nonces_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "http_signature_nonces_expiry_idx" ON "http_signature_nonces" USING btree ("org_id","livemode","expires_at");--> statement-breakpoint

-- The nonces of agents' HTTP message signatures (issue 42 §5; docs/http-signatures.md, "Nonces"):
-- the context read inserts the request's, and updates a row only once it has expired (reused);
-- it deletes a few expired rows of the org and mode as it goes. Per org by row-level security,
-- per mode by the key.
GRANT SELECT, INSERT, UPDATE, DELETE ON http_signature_nonces TO app_user;
--> statement-breakpoint
ALTER TABLE http_signature_nonces ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE http_signature_nonces FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY http_signature_nonces_tenant ON http_signature_nonces
  USING (org_id = nullif(current_setting('app.org_id', true), '')::uuid)
  WITH CHECK (org_id = nullif(current_setting('app.org_id', true), '')::uuid);
