CREATE TABLE "status_list_entries" (
	"org_id" uuid DEFAULT nullif(current_setting('app.org_id', true), '')::uuid NOT NULL,
	"list" integer NOT NULL,
	"idx" integer NOT NULL,
	"status" smallint DEFAULT 0 NOT NULL,
	"subject_type" text NOT NULL,
	"subject_id" text NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "status_list_entries_org_id_list_idx_pk" PRIMARY KEY("org_id","list","idx"),
	CONSTRAINT "status_list_entries_status_check" CHECK ("status_list_entries"."status" between 0 and 3)
);
--> statement-breakpoint
ALTER TABLE "status_list_entries" ADD CONSTRAINT "status_list_entries_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "status_list_entries_subject_idx" ON "status_list_entries" USING btree ("org_id","subject_type","subject_id");