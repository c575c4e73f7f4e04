DROP INDEX "control_effects_claim_idx";--> statement-breakpoint
ALTER TABLE "control_effects" ADD COLUMN "reported_by_type" text NOT NULL;--> statement-breakpoint
ALTER TABLE "control_effects" ADD COLUMN "reported_by_id" text NOT NULL;--> statement-breakpoint
CREATE INDEX "control_effects_org_claim_idx" ON "control_effects" USING btree ("org_id","gate_claim","occurred_at","id");--> statement-breakpoint
ALTER TABLE "control_effects" ADD CONSTRAINT "control_effects_reported_by_check" CHECK ("control_effects"."reported_by_type" in ('api_key', 'user'));