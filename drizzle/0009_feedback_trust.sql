CREATE TABLE "agent_trust_outcomes" (
	"org_id" uuid DEFAULT nullif(current_setting('app.org_id', true), '')::uuid NOT NULL,
	"assessment_id" uuid NOT NULL,
	"effect" text NOT NULL,
	"agent_id" uuid NOT NULL,
	"feedback_id" uuid NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "agent_trust_outcomes_org_id_assessment_id_effect_pk" PRIMARY KEY("org_id","assessment_id","effect"),
	CONSTRAINT "agent_trust_outcomes_effect_check" CHECK ("agent_trust_outcomes"."effect" in ('lowered', 'raised'))
);
--> statement-breakpoint
ALTER TABLE "assessment_feedback" ADD COLUMN "actor_type" text;--> statement-breakpoint
ALTER TABLE "assessment_feedback" ADD COLUMN "actor_id" text;--> statement-breakpoint
ALTER TABLE "agents" ADD COLUMN "confirmed_frauds" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "agents" ADD COLUMN "confirmed_legitimate" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "agent_trust_outcomes" ADD CONSTRAINT "agent_trust_outcomes_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "agent_trust_outcomes" ADD CONSTRAINT "agent_trust_outcomes_assessment_fk" FOREIGN KEY ("org_id","assessment_id") REFERENCES "public"."assessments"("org_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint

-- ---------------------------------------------------------------------------------------------
-- Outcome feedback moves agent trust (docs/feedback.md)
-- ---------------------------------------------------------------------------------------------

-- Append only: an assessment that moved trust keeps that mark.
GRANT SELECT, INSERT ON agent_trust_outcomes TO app_user;
--> statement-breakpoint
ALTER TABLE agent_trust_outcomes ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE agent_trust_outcomes FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY agent_trust_outcomes_tenant ON agent_trust_outcomes
  USING (org_id = nullif(current_setting('app.org_id', true), '')::uuid)
  WITH CHECK (org_id = nullif(current_setting('app.org_id', true), '')::uuid);
--> statement-breakpoint
-- The trust model gains confirmed outcomes: each assessment confirmed as fraud or chargeback
-- takes 15 points (at most 45 in all: a bad record should weigh more than routine denials, yet
-- not make the agent unrecoverable by evidence alone), each reviewed assessment confirmed
-- legitimate gives 3 (at most 15: a person's confirmation is worth more than an automated
-- approval, which gives 1).
CREATE FUNCTION agent_trust_score(
  status text, card_status text, active_keys integer,
  approvals integer, denials integer, suspensions integer,
  confirmed_frauds integer, confirmed_legitimate integer
) RETURNS integer
LANGUAGE sql IMMUTABLE SET search_path = public, pg_temp AS $$
  SELECT CASE WHEN status = 'revoked' THEN 0 ELSE
    least(
      CASE WHEN status = 'suspended' THEN 10 ELSE 100 END,
      greatest(0, least(100,
        30
        + CASE card_status WHEN 'verified' THEN 30 WHEN 'invalid' THEN -20 ELSE 0 END
        + CASE WHEN active_keys > 0 THEN 15 ELSE 0 END
        + least(approvals, 25)
        - least(5 * denials, 30)
        - least(10 * suspensions, 30)
        - least(15 * confirmed_frauds, 45)
        + least(3 * confirmed_legitimate, 15)
      ))
    )
  END
$$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION agents_derive_trust() RETURNS trigger
LANGUAGE plpgsql SET search_path = public, pg_temp AS $$
BEGIN
  IF TG_OP = 'UPDATE' AND OLD.status = 'revoked' AND NEW.status <> 'revoked' THEN
    RAISE EXCEPTION 'agent % is revoked; revocation is terminal', OLD.id
      USING ERRCODE = 'check_violation', CONSTRAINT = 'agents_revoked_terminal';
  END IF;
  NEW.trust_score := agent_trust_score(NEW.status, NEW.card_status, NEW.active_keys,
    NEW.approvals, NEW.denials, NEW.suspensions, NEW.confirmed_frauds, NEW.confirmed_legitimate);
  NEW.risk_tier := agent_risk_tier(NEW.trust_score);
  IF TG_OP = 'UPDATE' THEN
    NEW.updated_at := now();
  END IF;
  RETURN NEW;
END
$$;
--> statement-breakpoint
DROP FUNCTION agent_trust_score(text, text, integer, integer, integer, integer);
