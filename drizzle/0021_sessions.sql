CREATE TABLE "session_events" (
	"org_id" uuid DEFAULT nullif(current_setting('app.org_id', true), '')::uuid NOT NULL,
	"session_id" uuid NOT NULL,
	"sequence" integer NOT NULL,
	"type" text NOT NULL,
	"time" timestamp (3) with time zone NOT NULL,
	"payload_digest" text NOT NULL,
	"prev_hash" text NOT NULL,
	"hash" text NOT NULL,
	"assessment_id" uuid,
	"signature" text,
	"key_id" text,
	"received_at" timestamp (3) with time zone NOT NULL,
	"audit_entry_id" uuid NOT NULL,
	"audit_sequence" bigint NOT NULL,
	CONSTRAINT "session_events_org_id_session_id_sequence_pk" PRIMARY KEY("org_id","session_id","sequence"),
	CONSTRAINT "session_events_sequence_check" CHECK ("session_events"."sequence" >= 1 and "session_events"."sequence" <= 10000),
	CONSTRAINT "session_events_type_check" CHECK ("session_events"."type" in ('message', 'tool_call', 'tool_result', 'action', 'observation', 'custom')),
	CONSTRAINT "session_events_hashes_check" CHECK ("session_events"."hash" ~ '^[0-9a-f]{64}$' and "session_events"."prev_hash" ~ '^[0-9a-f]{64}$'
        and "session_events"."payload_digest" ~ '^sha256:[0-9a-f]{64}$'),
	CONSTRAINT "session_events_signature_check" CHECK (("session_events"."signature" is null) = ("session_events"."key_id" is null))
);
--> statement-breakpoint
CREATE TABLE "sessions" (
	"id" uuid PRIMARY KEY NOT NULL,
	"org_id" uuid DEFAULT nullif(current_setting('app.org_id', true), '')::uuid NOT NULL,
	"livemode" boolean NOT NULL,
	"agent_id" uuid NOT NULL,
	"external_id" text NOT NULL,
	"require_signatures" boolean NOT NULL,
	"metadata" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"head_sequence" integer NOT NULL,
	"head_hash" text,
	"signed_events" integer NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL,
	"updated_at" timestamp (3) with time zone NOT NULL,
	"created_audit_entry_id" uuid NOT NULL,
	"created_audit_sequence" bigint NOT NULL,
	"audit_entry_id" uuid NOT NULL,
	"audit_sequence" bigint NOT NULL,
	CONSTRAINT "sessions_head_check" CHECK ("sessions"."head_sequence" >= 0 and "sessions"."head_sequence" <= 10000),
	CONSTRAINT "sessions_head_hash_check" CHECK (("sessions"."head_sequence" = 0) = ("sessions"."head_hash" is null)
        and ("sessions"."head_hash" is null or "sessions"."head_hash" ~ '^[0-9a-f]{64}$')),
	CONSTRAINT "sessions_signed_check" CHECK ("sessions"."signed_events" >= 0 and "sessions"."signed_events" <= "sessions"."head_sequence"),
	CONSTRAINT "sessions_external_id_check" CHECK (char_length("sessions"."external_id") between 1 and 200)
);
--> statement-breakpoint
CREATE UNIQUE INDEX "sessions_org_id_idx" ON "sessions" USING btree ("org_id","id");--> statement-breakpoint
ALTER TABLE "session_events" ADD CONSTRAINT "session_events_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "session_events" ADD CONSTRAINT "session_events_session_fk" FOREIGN KEY ("org_id","session_id") REFERENCES "public"."sessions"("org_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "session_events" ADD CONSTRAINT "session_events_key_fk" FOREIGN KEY ("org_id","key_id") REFERENCES "public"."agent_keys"("org_id","thumbprint") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "sessions" ADD CONSTRAINT "sessions_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "sessions" ADD CONSTRAINT "sessions_agent_fk" FOREIGN KEY ("org_id","agent_id") REFERENCES "public"."agents"("org_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "session_events_assessment_idx" ON "session_events" USING btree ("org_id","assessment_id");--> statement-breakpoint
CREATE UNIQUE INDEX "sessions_external_idx" ON "sessions" USING btree ("org_id","livemode","agent_id","external_id");--> statement-breakpoint
CREATE INDEX "sessions_list_idx" ON "sessions" USING btree ("org_id","livemode","id");