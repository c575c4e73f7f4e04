CREATE TABLE "control_effects" (
	"id" uuid PRIMARY KEY NOT NULL,
	"org_id" uuid DEFAULT nullif(current_setting('app.org_id', true), '')::uuid NOT NULL,
	"livemode" boolean NOT NULL,
	"effect" text NOT NULL,
	"observer" text NOT NULL,
	"reference" text NOT NULL,
	"occurred_at" timestamp (3) with time zone NOT NULL,
	"action" text,
	"resource" text,
	"amount" bigint,
	"currency" text,
	"gate_type" text,
	"gate_id" uuid,
	"gate_claim" text,
	"metadata" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL,
	"audit_entry_id" uuid NOT NULL,
	"audit_sequence" bigint NOT NULL,
	CONSTRAINT "control_effects_gate_check" CHECK (("control_effects"."gate_type" is null and "control_effects"."gate_id" is null and "control_effects"."gate_claim" is null)
        or ("control_effects"."gate_type" in ('assessment', 'grant', 'decision') and "control_effects"."gate_id" is not null
            and "control_effects"."gate_claim" is not null)),
	CONSTRAINT "control_effects_amount_check" CHECK (("control_effects"."amount" is null) = ("control_effects"."currency" is null) and ("control_effects"."amount" is null or "control_effects"."amount" >= 0))
);
--> statement-breakpoint
ALTER TABLE "control_effects" ADD CONSTRAINT "control_effects_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "control_effects_org_id_idx" ON "control_effects" USING btree ("org_id","id");--> statement-breakpoint
CREATE UNIQUE INDEX "control_effects_reference_idx" ON "control_effects" USING btree ("org_id","livemode","observer","reference");--> statement-breakpoint
CREATE INDEX "control_effects_occurred_idx" ON "control_effects" USING btree ("org_id","livemode","occurred_at","id");--> statement-breakpoint
CREATE INDEX "control_effects_claim_idx" ON "control_effects" USING btree ("org_id","livemode","gate_claim","occurred_at","id");