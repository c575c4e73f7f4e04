-- The target of the org-scoped foreign key below; created first, the key needs it.
CREATE UNIQUE INDEX "assessments_org_id_key" ON "assessments" USING btree ("org_id","id");--> statement-breakpoint
CREATE TABLE "assessment_feedback" (
	"id" uuid PRIMARY KEY NOT NULL,
	"org_id" uuid DEFAULT nullif(current_setting('app.org_id', true), '')::uuid NOT NULL,
	"assessment_id" uuid NOT NULL,
	"livemode" boolean NOT NULL,
	"label" text NOT NULL,
	"occurred_at" timestamp (3) with time zone NOT NULL,
	"source" text,
	"note" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "assessment_feedback_label_check" CHECK ("assessment_feedback"."label" in ('fraud', 'dispute', 'chargeback', 'refund', 'legitimate'))
);
--> statement-breakpoint
ALTER TABLE "assessment_feedback" ADD CONSTRAINT "assessment_feedback_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "assessment_feedback" ADD CONSTRAINT "assessment_feedback_assessment_fk" FOREIGN KEY ("org_id","assessment_id") REFERENCES "public"."assessments"("org_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "assessment_feedback_assessment_idx" ON "assessment_feedback" USING btree ("org_id","assessment_id","created_at");--> statement-breakpoint
CREATE INDEX "assessment_feedback_label_idx" ON "assessment_feedback" USING btree ("org_id","livemode","label","occurred_at");--> statement-breakpoint

-- ---------------------------------------------------------------------------------------------
-- Outcome feedback: labels on assessments (docs/feedback.md)
-- ---------------------------------------------------------------------------------------------

-- Append only: a label is never changed or removed; a later one supersedes it.
GRANT SELECT, INSERT ON assessment_feedback TO app_user;
--> statement-breakpoint
ALTER TABLE assessment_feedback ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE assessment_feedback FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY assessment_feedback_tenant ON assessment_feedback
  USING (org_id = nullif(current_setting('app.org_id', true), '')::uuid)
  WITH CHECK (org_id = nullif(current_setting('app.org_id', true), '')::uuid);
--> statement-breakpoint
-- Shadow policies (docs/shadow-policies.md). No new table, so no new row-level security policy:
-- `policies` and `assessments` keep their tenant policies and grants (app_user updates policies
-- and only inserts assessments: a shadow verdict is written with its assessment, in its insert).
ALTER TABLE "assessments" ADD COLUMN "shadow" jsonb;--> statement-breakpoint
ALTER TABLE "policies" ADD COLUMN "shadow" boolean DEFAULT false NOT NULL;--> statement-breakpoint
CREATE INDEX "assessments_shadow_idx" ON "assessments" USING btree ("org_id",("shadow"->>'policy_id'),"created_at") WHERE "assessments"."shadow" is not null;--> statement-breakpoint
CREATE UNIQUE INDEX "policies_one_shadow_idx" ON "policies" USING btree ("org_id") WHERE "policies"."shadow";--> statement-breakpoint
ALTER TABLE "policies" ADD CONSTRAINT "policies_shadow_draft_check" CHECK (not ("policies"."shadow" and "policies"."status" = 'active'));
