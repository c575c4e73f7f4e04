ALTER TABLE "action_decisions" ADD COLUMN "status_list" integer;--> statement-breakpoint
ALTER TABLE "action_decisions" ADD COLUMN "status_idx" integer;--> statement-breakpoint
ALTER TABLE "agent_keys" ADD COLUMN "status_list" integer;--> statement-breakpoint
ALTER TABLE "agent_keys" ADD COLUMN "status_idx" integer;--> statement-breakpoint
ALTER TABLE "agents" ADD COLUMN "status_list" integer;--> statement-breakpoint
ALTER TABLE "agents" ADD COLUMN "status_idx" integer;--> statement-breakpoint
ALTER TABLE "action_decisions" ADD CONSTRAINT "action_decisions_status_place_check" CHECK (("action_decisions"."status_list" is null) = ("action_decisions"."status_idx" is null));--> statement-breakpoint
ALTER TABLE "action_decisions" ADD CONSTRAINT "action_decisions_place_grant_check" CHECK ("action_decisions"."status_list" is null or "action_decisions"."grant_id" is not null);--> statement-breakpoint
ALTER TABLE "agent_keys" ADD CONSTRAINT "agent_keys_status_place_check" CHECK (("agent_keys"."status_list" is null) = ("agent_keys"."status_idx" is null));--> statement-breakpoint
ALTER TABLE "agents" ADD CONSTRAINT "agents_status_place_check" CHECK (("agents"."status_list" is null) = ("agents"."status_idx" is null));