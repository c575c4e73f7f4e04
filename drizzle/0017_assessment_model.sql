ALTER TABLE "assessments" ADD COLUMN "model" jsonb;--> statement-breakpoint
ALTER TABLE "assessments" ADD COLUMN "shadow_model" jsonb;