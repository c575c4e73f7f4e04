CREATE TABLE "review_settings" (
	"org_id" uuid PRIMARY KEY DEFAULT nullif(current_setting('app.org_id', true), '')::uuid NOT NULL,
	"sla_seconds" integer NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "review_settings_sla_check" CHECK ("review_settings"."sla_seconds" between 60 and 2592000)
);
--> statement-breakpoint
CREATE TABLE "reviews" (
	"id" uuid PRIMARY KEY NOT NULL,
	"org_id" uuid DEFAULT nullif(current_setting('app.org_id', true), '')::uuid NOT NULL,
	"assessment_id" uuid NOT NULL,
	"livemode" boolean NOT NULL,
	"agent_id" uuid,
	"created_at" timestamp (3) with time zone NOT NULL,
	"expires_at" timestamp (3) with time zone NOT NULL,
	"status" text DEFAULT 'open' NOT NULL,
	"spend" jsonb,
	"decision" text,
	"reason" text,
	"note" text,
	"resolved_at" timestamp (3) with time zone,
	"resolved_by" jsonb,
	"jws" text,
	"kid" text,
	"audit_entry_id" uuid,
	CONSTRAINT "reviews_status_check" CHECK ("reviews"."status" in ('open', 'resolved', 'expired')),
	CONSTRAINT "reviews_closed_check" CHECK (("reviews"."status" = 'open') = ("reviews"."decision" is null and "reviews"."resolved_at" is null))
);
--> statement-breakpoint
ALTER TABLE "review_settings" ADD CONSTRAINT "review_settings_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "reviews" ADD CONSTRAINT "reviews_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "reviews_assessment_idx" ON "reviews" USING btree ("org_id","assessment_id");--> statement-breakpoint
CREATE INDEX "reviews_org_idx" ON "reviews" USING btree ("org_id","livemode","id");--> statement-breakpoint
CREATE INDEX "reviews_due_idx" ON "reviews" USING btree ("expires_at") WHERE "reviews"."status" = 'open';--> statement-breakpoint

-- ---------------------------------------------------------------------------------------------
-- The review queue (docs/reviews.md)
-- ---------------------------------------------------------------------------------------------

-- No DELETE: an item is opened and closed, never removed (the ledger names it).
GRANT SELECT, INSERT, UPDATE ON reviews, review_settings TO app_user;
--> statement-breakpoint
ALTER TABLE reviews ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE reviews FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY reviews_tenant ON reviews
  USING (org_id = nullif(current_setting('app.org_id', true), '')::uuid)
  WITH CHECK (org_id = nullif(current_setting('app.org_id', true), '')::uuid);
--> statement-breakpoint
ALTER TABLE review_settings ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE review_settings FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY review_settings_tenant ON review_settings
  USING (org_id = nullif(current_setting('app.org_id', true), '')::uuid)
  WITH CHECK (org_id = nullif(current_setting('app.org_id', true), '')::uuid);
--> statement-breakpoint
-- The SLA sweep runs outside any org: it learns which orgs have overdue items (ids only, like
-- ledger_orgs_awaiting_checkpoint) and then reads each org under its own tenant setting.
CREATE FUNCTION reviews_orgs_overdue(max_orgs integer)
RETURNS TABLE (org_id uuid)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp AS $$
  SELECT r.org_id FROM reviews r
  WHERE r.status = 'open' AND r.expires_at <= now()
  GROUP BY r.org_id
  ORDER BY min(r.expires_at), r.org_id
  LIMIT max_orgs
$$;
--> statement-breakpoint
REVOKE ALL ON FUNCTION reviews_orgs_overdue(integer) FROM PUBLIC;
--> statement-breakpoint
GRANT EXECUTE ON FUNCTION reviews_orgs_overdue(integer) TO app_user;
