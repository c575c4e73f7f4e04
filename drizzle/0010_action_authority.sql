CREATE TABLE "action_decisions" (
	"id" uuid PRIMARY KEY NOT NULL,
	"org_id" uuid DEFAULT nullif(current_setting('app.org_id', true), '')::uuid NOT NULL,
	"mandate_id" uuid NOT NULL,
	"decision" text NOT NULL,
	"reasons" jsonb NOT NULL,
	"agent" jsonb NOT NULL,
	"action" text NOT NULL,
	"resource" text NOT NULL,
	"amount" bigint,
	"currency" text,
	"audience" text,
	"grant_id" uuid,
	"grant_jws" text,
	"grant_expires_at" timestamp (3) with time zone,
	"created_at" timestamp (3) with time zone NOT NULL,
	"audit_entry_id" uuid NOT NULL,
	"audit_sequence" bigint NOT NULL,
	CONSTRAINT "action_decisions_decision_check" CHECK ("action_decisions"."decision" in ('ALLOW', 'DENY')),
	CONSTRAINT "action_decisions_grant_check" CHECK (("action_decisions"."grant_id" is null and "action_decisions"."grant_jws" is null and "action_decisions"."grant_expires_at" is null)
        or ("action_decisions"."decision" = 'ALLOW' and "action_decisions"."grant_id" is not null and "action_decisions"."grant_jws" is not null
            and "action_decisions"."grant_expires_at" is not null and "action_decisions"."audience" is not null))
);
--> statement-breakpoint
CREATE TABLE "action_mandates" (
	"id" uuid PRIMARY KEY NOT NULL,
	"org_id" uuid DEFAULT nullif(current_setting('app.org_id', true), '')::uuid NOT NULL,
	"agent_id" uuid NOT NULL,
	"principal_id" uuid,
	"action" text NOT NULL,
	"resource" text NOT NULL,
	"not_before" timestamp (3) with time zone NOT NULL,
	"expires_at" timestamp (3) with time zone NOT NULL,
	"currency" text,
	"max_amount_per_use" bigint,
	"max_amount_total" bigint,
	"max_uses" integer,
	"uses" integer DEFAULT 0 NOT NULL,
	"amount_used" bigint DEFAULT 0 NOT NULL,
	"status" text DEFAULT 'active' NOT NULL,
	"metadata" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL,
	"revoked_at" timestamp (3) with time zone,
	"audit_entry_id" uuid NOT NULL,
	"audit_sequence" bigint NOT NULL,
	CONSTRAINT "action_mandates_status_check" CHECK ("action_mandates"."status" in ('active', 'revoked')),
	CONSTRAINT "action_mandates_window_check" CHECK ("action_mandates"."expires_at" > "action_mandates"."not_before"),
	CONSTRAINT "action_mandates_uses_check" CHECK ("action_mandates"."uses" >= 0 and ("action_mandates"."max_uses" is null or "action_mandates"."uses" <= "action_mandates"."max_uses")),
	CONSTRAINT "action_mandates_amount_check" CHECK ("action_mandates"."amount_used" >= 0 and ("action_mandates"."max_amount_total" is null or "action_mandates"."amount_used" <= "action_mandates"."max_amount_total")),
	CONSTRAINT "action_mandates_revoked_check" CHECK (("action_mandates"."status" = 'revoked') = ("action_mandates"."revoked_at" is not null))
);
--> statement-breakpoint
CREATE TABLE "action_redemptions" (
	"org_id" uuid DEFAULT nullif(current_setting('app.org_id', true), '')::uuid NOT NULL,
	"grant_id" uuid NOT NULL,
	"decision_id" uuid NOT NULL,
	"mandate_id" uuid NOT NULL,
	"executor_type" text NOT NULL,
	"executor_id" text NOT NULL,
	"action" text NOT NULL,
	"resource" text NOT NULL,
	"amount" bigint,
	"currency" text,
	"redeemed_at" timestamp (3) with time zone NOT NULL,
	"receipt_jws" text NOT NULL,
	"audit_entry_id" uuid NOT NULL,
	"audit_sequence" bigint NOT NULL,
	CONSTRAINT "action_redemptions_org_id_grant_id_pk" PRIMARY KEY("org_id","grant_id")
);
--> statement-breakpoint
CREATE UNIQUE INDEX "action_decisions_org_id_idx" ON "action_decisions" USING btree ("org_id","id");--> statement-breakpoint
CREATE UNIQUE INDEX "action_decisions_grant_idx" ON "action_decisions" USING btree ("org_id","grant_id");--> statement-breakpoint
CREATE INDEX "action_decisions_mandate_idx" ON "action_decisions" USING btree ("org_id","mandate_id","id");--> statement-breakpoint
CREATE UNIQUE INDEX "action_mandates_org_id_idx" ON "action_mandates" USING btree ("org_id","id");--> statement-breakpoint
CREATE INDEX "action_mandates_agent_idx" ON "action_mandates" USING btree ("org_id","agent_id","id");--> statement-breakpoint
CREATE UNIQUE INDEX "action_redemptions_decision_idx" ON "action_redemptions" USING btree ("org_id","decision_id");--> statement-breakpoint
ALTER TABLE "action_decisions" ADD CONSTRAINT "action_decisions_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "action_decisions" ADD CONSTRAINT "action_decisions_mandate_fk" FOREIGN KEY ("org_id","mandate_id") REFERENCES "public"."action_mandates"("org_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "action_mandates" ADD CONSTRAINT "action_mandates_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "action_mandates" ADD CONSTRAINT "action_mandates_agent_fk" FOREIGN KEY ("org_id","agent_id") REFERENCES "public"."agents"("org_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "action_mandates" ADD CONSTRAINT "action_mandates_principal_fk" FOREIGN KEY ("org_id","principal_id") REFERENCES "public"."principals"("org_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "action_redemptions" ADD CONSTRAINT "action_redemptions_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "action_redemptions" ADD CONSTRAINT "action_redemptions_grant_fk" FOREIGN KEY ("org_id","grant_id") REFERENCES "public"."action_decisions"("org_id","grant_id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "action_redemptions" ADD CONSTRAINT "action_redemptions_decision_fk" FOREIGN KEY ("org_id","decision_id") REFERENCES "public"."action_decisions"("org_id","id") ON DELETE no action ON UPDATE no action;