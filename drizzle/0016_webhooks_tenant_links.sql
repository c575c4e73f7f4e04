-- A delivery references its event within its own org, and is found by its transaction's time.
ALTER TABLE "webhook_deliveries" DROP CONSTRAINT "webhook_deliveries_event_id_events_id_fk";
--> statement-breakpoint
DROP INDEX "events_org_idx";--> statement-breakpoint
CREATE UNIQUE INDEX "events_org_id_idx" ON "events" USING btree ("org_id","id");--> statement-breakpoint
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_org_id_event_id_events_org_id_id_fk" FOREIGN KEY ("org_id","event_id") REFERENCES "public"."events"("org_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "webhook_deliveries_made_idx" ON "webhook_deliveries" USING btree ("org_id","created_at");
