CREATE TABLE "eval_sets" (
	"id" uuid PRIMARY KEY NOT NULL,
	"org_id" uuid DEFAULT nullif(current_setting('app.org_id', true), '')::uuid NOT NULL,
	"name" text NOT NULL,
	"description" text,
	"cases" jsonb NOT NULL,
	"case_count" integer NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "evals" (
	"id" uuid PRIMARY KEY NOT NULL,
	"org_id" uuid DEFAULT nullif(current_setting('app.org_id', true), '')::uuid NOT NULL,
	"eval_set_id" uuid NOT NULL,
	"eval_set_name" text NOT NULL,
	"policy_id" uuid NOT NULL,
	"policy_rules" jsonb NOT NULL,
	"positive" text NOT NULL,
	"case_count" integer NOT NULL,
	"metrics" jsonb NOT NULL,
	"confusion" jsonb NOT NULL,
	"misclassified" jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "evals_positive_check" CHECK ("evals"."positive" in ('deny', 'review_or_deny'))
);
--> statement-breakpoint
ALTER TABLE "assessments" ADD COLUMN "inputs" jsonb;--> statement-breakpoint
ALTER TABLE "policies" ADD COLUMN "aggregates" jsonb DEFAULT '[]'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "eval_sets" ADD CONSTRAINT "eval_sets_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "evals" ADD CONSTRAINT "evals_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "eval_sets_org_idx" ON "eval_sets" USING btree ("org_id","id");--> statement-breakpoint
CREATE INDEX "evals_org_idx" ON "evals" USING btree ("org_id","id");--> statement-breakpoint
CREATE INDEX "evals_set_idx" ON "evals" USING btree ("org_id","eval_set_id");--> statement-breakpoint
CREATE INDEX "assessments_payee_window_idx" ON "assessments" USING btree ("org_id","counterparty","created_at");