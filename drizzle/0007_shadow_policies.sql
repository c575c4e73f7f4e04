-- Shadow policies (docs/shadow-policies.md). No new table, so no new row-level security policy:
-- `policies` and `assessments` keep their tenant policies and grants (app_user updates policies
-- and only inserts assessments: a shadow verdict is written with its assessment, in its insert).
ALTER TABLE "assessments" ADD COLUMN "shadow" jsonb;--> statement-breakpoint
ALTER TABLE "policies" ADD COLUMN "shadow" boolean DEFAULT false NOT NULL;--> statement-breakpoint
CREATE INDEX "assessments_shadow_idx" ON "assessments" USING btree ("org_id",("shadow"->>'policy_id'),"created_at") WHERE "assessments"."shadow" is not null;--> statement-breakpoint
CREATE UNIQUE INDEX "policies_one_shadow_idx" ON "policies" USING btree ("org_id") WHERE "policies"."shadow";--> statement-breakpoint
ALTER TABLE "policies" ADD CONSTRAINT "policies_shadow_draft_check" CHECK (not ("policies"."shadow" and "policies"."status" = 'active'));
