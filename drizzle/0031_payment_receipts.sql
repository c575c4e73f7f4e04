CREATE TABLE "payment_receipts" (
	"id" uuid PRIMARY KEY NOT NULL,
	"org_id" uuid DEFAULT nullif(current_setting('app.org_id', true), '')::uuid NOT NULL,
	"assessment_id" uuid NOT NULL,
	"livemode" boolean NOT NULL,
	"payment_id" text NOT NULL,
	"status" text NOT NULL,
	"iss" text NOT NULL,
	"iat" bigint NOT NULL,
	"reference" text NOT NULL,
	"psp_confirmation_id" text,
	"network_confirmation_id" text,
	"error" text,
	"error_description" text,
	"jws" text,
	"content_digest" text NOT NULL,
	"verification_status" text NOT NULL,
	"verification_reason" text NOT NULL,
	"issuer_id" uuid,
	"reference_match" text,
	"created_at" timestamp (3) with time zone NOT NULL,
	"audit_entry_id" uuid NOT NULL,
	"audit_sequence" bigint NOT NULL,
	CONSTRAINT "payment_receipts_status_check" CHECK ("payment_receipts"."status" in ('Success', 'Error')),
	CONSTRAINT "payment_receipts_verification_status_check" CHECK ("payment_receipts"."verification_status" in ('verified', 'unverified')),
	CONSTRAINT "payment_receipts_verification_reason_check" CHECK ("payment_receipts"."verification_reason" in ('issuer_signature', 'unsigned', 'unknown_issuer')),
	CONSTRAINT "payment_receipts_reference_match_check" CHECK ("payment_receipts"."reference_match" in ('reference', 'closed_mandate_reference'))
);
--> statement-breakpoint
ALTER TABLE "payment_receipts" ADD CONSTRAINT "payment_receipts_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "payment_receipts" ADD CONSTRAINT "payment_receipts_assessment_fk" FOREIGN KEY ("org_id","assessment_id") REFERENCES "public"."assessments"("org_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "payment_receipts" ADD CONSTRAINT "payment_receipts_audit_entry_fk" FOREIGN KEY ("org_id","audit_sequence") REFERENCES "public"."audit_entries"("org_id","sequence") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "payment_receipts_payment_idx" ON "payment_receipts" USING btree ("org_id","assessment_id","payment_id");--> statement-breakpoint
CREATE INDEX "payment_receipts_assessment_idx" ON "payment_receipts" USING btree ("org_id","assessment_id","id");--> statement-breakpoint
-- AP2 Payment Receipts recorded against assessments (issue 42 §1; docs/credentials.md, "Payment
-- receipts"): the org's rows (row-level security on app.org_id, like every org table),
-- append-only evidence: the app inserts and reads them, never changes or removes one.
GRANT SELECT, INSERT ON payment_receipts TO app_user;
--> statement-breakpoint
ALTER TABLE payment_receipts ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE payment_receipts FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY payment_receipts_tenant ON payment_receipts
  USING (org_id = nullif(current_setting('app.org_id', true), '')::uuid)
  WITH CHECK (org_id = nullif(current_setting('app.org_id', true), '')::uuid);
