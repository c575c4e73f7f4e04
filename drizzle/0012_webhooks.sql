CREATE TABLE "signing_keys" (
	"kid" text PRIMARY KEY NOT NULL,
	"public_jwk" jsonb NOT NULL,
	"first_seen_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"retired_at" timestamp (3) with time zone
);--> statement-breakpoint
CREATE TABLE "webhook_attempts" (
	"org_id" uuid DEFAULT nullif(current_setting('app.org_id', true), '')::uuid NOT NULL,
	"delivery_id" uuid NOT NULL,
	"number" integer NOT NULL,
	"started_at" timestamp (3) with time zone NOT NULL,
	"duration_ms" integer NOT NULL,
	"status_code" integer,
	"error" text,
	"next_retry_at" timestamp (3) with time zone,
	CONSTRAINT "webhook_attempts_delivery_id_number_pk" PRIMARY KEY("delivery_id","number")
);--> statement-breakpoint
CREATE TABLE "webhook_deliveries" (
	"id" uuid PRIMARY KEY NOT NULL,
	"org_id" uuid DEFAULT nullif(current_setting('app.org_id', true), '')::uuid NOT NULL,
	"event_id" uuid NOT NULL,
	"endpoint_id" uuid NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"next_attempt_at" timestamp (3) with time zone,
	"lease_until" timestamp (3) with time zone,
	"attempt_started_at" timestamp (3) with time zone,
	"dead_lettered_at" timestamp (3) with time zone,
	"created_at" timestamp (3) with time zone NOT NULL,
	"completed_at" timestamp (3) with time zone,
	CONSTRAINT "webhook_deliveries_pending_is_scheduled" CHECK ((status = 'pending') = (next_attempt_at IS NOT NULL))
);--> statement-breakpoint
CREATE TABLE "webhook_endpoints" (
	"id" uuid PRIMARY KEY NOT NULL,
	"org_id" uuid DEFAULT nullif(current_setting('app.org_id', true), '')::uuid NOT NULL,
	"url" text NOT NULL,
	"event_types" text[] NOT NULL,
	"description" text,
	"token" text,
	"livemode" boolean NOT NULL,
	"status" text DEFAULT 'enabled' NOT NULL,
	"disabled_reason" text,
	"created_at" timestamp (3) with time zone NOT NULL,
	"disabled_at" timestamp (3) with time zone,
	"deleted_at" timestamp (3) with time zone
);--> statement-breakpoint
ALTER TABLE "events" ADD COLUMN "livemode" boolean DEFAULT true NOT NULL;--> statement-breakpoint
CREATE UNIQUE INDEX "webhook_deliveries_event_endpoint_idx" ON "webhook_deliveries" USING btree ("event_id","endpoint_id");--> statement-breakpoint
CREATE UNIQUE INDEX "webhook_deliveries_org_id_idx" ON "webhook_deliveries" USING btree ("org_id","id");--> statement-breakpoint
CREATE INDEX "webhook_deliveries_endpoint_idx" ON "webhook_deliveries" USING btree ("org_id","endpoint_id","id");--> statement-breakpoint
CREATE INDEX "webhook_deliveries_due_idx" ON "webhook_deliveries" USING btree ("next_attempt_at") WHERE status = 'pending';--> statement-breakpoint
CREATE UNIQUE INDEX "webhook_endpoints_org_id_idx" ON "webhook_endpoints" USING btree ("org_id","id");--> statement-breakpoint
CREATE INDEX "webhook_endpoints_fanout_idx" ON "webhook_endpoints" USING btree ("org_id","livemode") WHERE status = 'enabled' AND deleted_at IS NULL;--> statement-breakpoint
ALTER TABLE "webhook_attempts" ADD CONSTRAINT "webhook_attempts_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "webhook_attempts" ADD CONSTRAINT "webhook_attempts_org_id_delivery_id_webhook_deliveries_org_id_id_fk" FOREIGN KEY ("org_id","delivery_id") REFERENCES "public"."webhook_deliveries"("org_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_event_id_events_id_fk" FOREIGN KEY ("event_id") REFERENCES "public"."events"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_org_id_endpoint_id_webhook_endpoints_org_id_id_fk" FOREIGN KEY ("org_id","endpoint_id") REFERENCES "public"."webhook_endpoints"("org_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "webhook_endpoints" ADD CONSTRAINT "webhook_endpoints_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE no action ON UPDATE no action;
