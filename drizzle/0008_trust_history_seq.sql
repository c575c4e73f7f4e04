-- The timeline's order was a global sequence, and its cursor showed how many trust events all
-- organizations had. Each agent now counts its own events (under the agent's row lock, which
-- the UPDATE or INSERT that fires the trigger holds, so the count cannot race).
ALTER TABLE "agent_trust_history" ALTER COLUMN "seq" SET DATA TYPE bigint;
--> statement-breakpoint
ALTER TABLE "agent_trust_history" ALTER COLUMN "seq" DROP DEFAULT;
--> statement-breakpoint
DROP SEQUENCE IF EXISTS agent_trust_history_seq_seq;
--> statement-breakpoint
-- Trigger and helper functions resolve names in public only: a temporary table of the same
-- name in the session cannot capture what they write.
ALTER FUNCTION uuid_v7() SET search_path = public, pg_temp;
--> statement-breakpoint
ALTER FUNCTION agent_trust_score(text, text, integer, integer, integer, integer)
  SET search_path = public, pg_temp;
--> statement-breakpoint
ALTER FUNCTION agent_risk_tier(integer) SET search_path = public, pg_temp;
--> statement-breakpoint
ALTER FUNCTION agents_derive_trust() SET search_path = public, pg_temp;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION agents_record_trust() RETURNS trigger
LANGUAGE plpgsql SET search_path = public, pg_temp AS $$
DECLARE
  previous_score integer := CASE WHEN TG_OP = 'UPDATE' THEN OLD.trust_score END;
  previous_tier text := CASE WHEN TG_OP = 'UPDATE' THEN OLD.risk_tier END;
  previous_status text := CASE WHEN TG_OP = 'UPDATE' THEN OLD.status END;
  data jsonb;
BEGIN
  IF previous_score IS NOT DISTINCT FROM NEW.trust_score
     AND previous_tier IS NOT DISTINCT FROM NEW.risk_tier
     AND previous_status IS NOT DISTINCT FROM NEW.status THEN
    RETURN NULL;
  END IF;
  INSERT INTO public.agent_trust_history (id, org_id, agent_id, seq, reason, status,
    trust_score, risk_tier, previous_score, previous_tier)
  VALUES (uuid_v7(), NEW.org_id, NEW.id,
    (SELECT coalesce(max(h.seq), 0) + 1 FROM public.agent_trust_history h
      WHERE h.org_id = NEW.org_id AND h.agent_id = NEW.id),
    NEW.trust_reason, NEW.status, NEW.trust_score, NEW.risk_tier, previous_score,
    previous_tier);
  IF TG_OP = 'INSERT' THEN
    RETURN NULL;
  END IF;
  data := jsonb_build_object(
    'agent_id', NEW.id, 'principal_id', NEW.principal_id, 'status', NEW.status,
    'trust_score', NEW.trust_score, 'risk_tier', NEW.risk_tier,
    'previous_score', previous_score, 'previous_tier', previous_tier,
    'reason', NEW.trust_reason);
  IF NEW.risk_tier <> previous_tier THEN
    INSERT INTO public.events (id, org_id, type, data)
    VALUES (uuid_v7(), NEW.org_id, 'agent.trust_changed', data);
  END IF;
  IF NEW.status <> previous_status AND NEW.status IN ('suspended', 'revoked') THEN
    INSERT INTO public.events (id, org_id, type, data)
    VALUES (uuid_v7(), NEW.org_id, 'agent.' || NEW.status, data);
  END IF;
  RETURN NULL;
END
$$;
