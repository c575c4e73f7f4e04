CREATE TABLE "assessments" (
	"id" uuid PRIMARY KEY NOT NULL,
	"org_id" uuid DEFAULT nullif(current_setting('app.org_id', true), '')::uuid NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL,
	"livemode" boolean NOT NULL,
	"kind" text NOT NULL,
	"mandate_type" text,
	"mandate_id" uuid NOT NULL,
	"content_hash" text NOT NULL,
	"idempotency_key" text,
	"agent_id" uuid,
	"agent" jsonb,
	"decision" text NOT NULL,
	"risk_level" text NOT NULL,
	"risk_score" integer NOT NULL,
	"reason" text NOT NULL,
	"policy_version" integer NOT NULL,
	"confidences" jsonb NOT NULL,
	"signals" jsonb NOT NULL,
	"rejection_reasons" jsonb NOT NULL,
	"jws" text NOT NULL,
	"kid" text NOT NULL,
	"verify_url" text NOT NULL,
	"audit_entry_id" uuid NOT NULL,
	"audit_sequence" bigint NOT NULL,
	"a2a" jsonb,
	"latency_ms" integer NOT NULL,
	"amount" bigint,
	"currency" text,
	"counterparty" text,
	CONSTRAINT "assessments_decision_check" CHECK ("assessments"."decision" in ('approve', 'review', 'deny'))
);
--> statement-breakpoint
CREATE TABLE "mandates" (
	"id" uuid PRIMARY KEY NOT NULL,
	"org_id" uuid DEFAULT nullif(current_setting('app.org_id', true), '')::uuid NOT NULL,
	"assessment_id" uuid NOT NULL,
	"kind" text NOT NULL,
	"mandate_type" text,
	"vct" text,
	"content_hash" text NOT NULL,
	"mandate_hash" text NOT NULL,
	"mandate" jsonb NOT NULL,
	"livemode" boolean NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "policies" (
	"id" uuid PRIMARY KEY NOT NULL,
	"org_id" uuid DEFAULT nullif(current_setting('app.org_id', true), '')::uuid NOT NULL,
	"name" text NOT NULL,
	"rules" jsonb NOT NULL,
	"velocity_window_seconds" integer,
	"status" text DEFAULT 'draft' NOT NULL,
	"version" integer,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"activated_at" timestamp with time zone,
	CONSTRAINT "policies_status_check" CHECK ("policies"."status" in ('draft', 'active'))
);
--> statement-breakpoint
ALTER TABLE "agent_trust_history" ALTER COLUMN "seq" SET DATA TYPE bigint;--> statement-breakpoint
ALTER TABLE "assessments" ADD CONSTRAINT "assessments_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "mandates" ADD CONSTRAINT "mandates_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "policies" ADD CONSTRAINT "policies_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "assessments_content_idx" ON "assessments" USING btree ("org_id","content_hash");--> statement-breakpoint
CREATE UNIQUE INDEX "assessments_idempotency_idx" ON "assessments" USING btree ("org_id","livemode","idempotency_key");--> statement-breakpoint
CREATE INDEX "assessments_org_idx" ON "assessments" USING btree ("org_id","id");--> statement-breakpoint
CREATE INDEX "assessments_agent_idx" ON "assessments" USING btree ("org_id","agent_id","created_at");--> statement-breakpoint
CREATE INDEX "assessments_counterparty_idx" ON "assessments" USING btree ("org_id","agent_id","counterparty");--> statement-breakpoint
CREATE UNIQUE INDEX "mandates_content_idx" ON "mandates" USING btree ("org_id","content_hash");--> statement-breakpoint
CREATE INDEX "mandates_org_idx" ON "mandates" USING btree ("org_id","id");--> statement-breakpoint
CREATE UNIQUE INDEX "policies_one_active_idx" ON "policies" USING btree ("org_id") WHERE "policies"."status" = 'active';--> statement-breakpoint
CREATE UNIQUE INDEX "policies_version_idx" ON "policies" USING btree ("org_id","version");--> statement-breakpoint
CREATE INDEX "policies_org_idx" ON "policies" USING btree ("org_id","id");