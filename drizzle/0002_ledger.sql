CREATE TABLE "audit_checkpoints" (
	"org_id" uuid DEFAULT nullif(current_setting('app.org_id', true), '')::uuid NOT NULL,
	"log_id" text NOT NULL,
	"tree_size" bigint NOT NULL,
	"root_hash" text NOT NULL,
	"time" timestamp (3) with time zone NOT NULL,
	"note" text NOT NULL,
	"jws" text NOT NULL,
	"previous_tree_size" bigint NOT NULL,
	"consistency_proof" text[] NOT NULL,
	CONSTRAINT "audit_checkpoints_org_id_tree_size_pk" PRIMARY KEY("org_id","tree_size")
);
--> statement-breakpoint
CREATE TABLE "audit_entries" (
	"org_id" uuid DEFAULT nullif(current_setting('app.org_id', true), '')::uuid NOT NULL,
	"sequence" bigint NOT NULL,
	"id" uuid NOT NULL,
	"type" text NOT NULL,
	"actor_type" text NOT NULL,
	"actor_id" text NOT NULL,
	"subject_type" text,
	"subject_id" text,
	"digest" text NOT NULL,
	"time" timestamp (3) with time zone NOT NULL,
	"prev_hash" text NOT NULL,
	"hash" text NOT NULL,
	"leaf_hash" text NOT NULL,
	CONSTRAINT "audit_entries_org_id_sequence_pk" PRIMARY KEY("org_id","sequence")
);
--> statement-breakpoint
CREATE TABLE "events" (
	"id" uuid PRIMARY KEY NOT NULL,
	"org_id" uuid DEFAULT nullif(current_setting('app.org_id', true), '')::uuid NOT NULL,
	"type" text NOT NULL,
	"data" jsonb NOT NULL,
	"dedupe_key" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "audit_checkpoints" ADD CONSTRAINT "audit_checkpoints_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "audit_entries" ADD CONSTRAINT "audit_entries_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "events" ADD CONSTRAINT "events_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "audit_checkpoints_log_idx" ON "audit_checkpoints" USING btree ("log_id","tree_size");--> statement-breakpoint
CREATE UNIQUE INDEX "audit_entries_id_idx" ON "audit_entries" USING btree ("id");--> statement-breakpoint
CREATE UNIQUE INDEX "audit_entries_leaf_hash_idx" ON "audit_entries" USING btree ("leaf_hash");--> statement-breakpoint
CREATE INDEX "audit_entries_type_idx" ON "audit_entries" USING btree ("org_id","type","sequence");--> statement-breakpoint
CREATE INDEX "audit_entries_time_idx" ON "audit_entries" USING btree ("org_id","time");--> statement-breakpoint
CREATE UNIQUE INDEX "events_dedupe_idx" ON "events" USING btree ("org_id","dedupe_key");--> statement-breakpoint
CREATE INDEX "events_org_idx" ON "events" USING btree ("org_id","id");