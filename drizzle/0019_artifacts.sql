CREATE TABLE "artifacts" (
	"id" uuid PRIMARY KEY NOT NULL,
	"org_id" uuid DEFAULT nullif(current_setting('app.org_id', true), '')::uuid NOT NULL,
	"livemode" boolean NOT NULL,
	"digest" text NOT NULL,
	"name" text NOT NULL,
	"media_type" text,
	"size_bytes" bigint,
	"metadata" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"receipt" text NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL,
	"audit_entry_id" uuid NOT NULL,
	"audit_sequence" bigint NOT NULL,
	CONSTRAINT "artifacts_digest_check" CHECK ("artifacts"."digest" ~ '^sha256:[0-9a-f]{64}$'),
	CONSTRAINT "artifacts_name_check" CHECK (char_length("artifacts"."name") between 1 and 500),
	CONSTRAINT "artifacts_media_type_check" CHECK ("artifacts"."media_type" is null or char_length("artifacts"."media_type") between 3 and 255),
	CONSTRAINT "artifacts_size_check" CHECK ("artifacts"."size_bytes" is null or "artifacts"."size_bytes" >= 0),
	CONSTRAINT "artifacts_metadata_check" CHECK (jsonb_typeof("artifacts"."metadata") = 'object')
);
--> statement-breakpoint
ALTER TABLE "artifacts" ADD CONSTRAINT "artifacts_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "artifacts" ADD CONSTRAINT "artifacts_audit_entry_fk" FOREIGN KEY ("org_id","audit_sequence") REFERENCES "public"."audit_entries"("org_id","sequence") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "artifacts_org_id_idx" ON "artifacts" USING btree ("org_id","id");--> statement-breakpoint
CREATE UNIQUE INDEX "artifacts_digest_idx" ON "artifacts" USING btree ("org_id","livemode","digest");--> statement-breakpoint
CREATE INDEX "artifacts_public_digest_idx" ON "artifacts" USING btree ("digest","created_at","id") WHERE livemode;--> statement-breakpoint
CREATE INDEX "artifacts_list_idx" ON "artifacts" USING btree ("org_id","livemode","id");