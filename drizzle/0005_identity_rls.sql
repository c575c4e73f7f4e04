-- Identity tables: tenant RLS like every org table; no DELETE (principals are erased, agents
-- and keys revoked, history appended).
GRANT SELECT, INSERT, UPDATE ON principals, agents, agent_keys TO app_user;
--> statement-breakpoint
GRANT SELECT, INSERT ON agent_trust_history TO app_user;
--> statement-breakpoint
GRANT USAGE ON SEQUENCE agent_trust_history_seq_seq TO app_user;
--> statement-breakpoint
ALTER TABLE principals ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE principals FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE agents ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE agents FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE agent_keys ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE agent_keys FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE agent_trust_history ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE agent_trust_history FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY principals_tenant ON principals
  USING (org_id = nullif(current_setting('app.org_id', true), '')::uuid)
  WITH CHECK (org_id = nullif(current_setting('app.org_id', true), '')::uuid);
--> statement-breakpoint
CREATE POLICY agents_tenant ON agents
  USING (org_id = nullif(current_setting('app.org_id', true), '')::uuid)
  WITH CHECK (org_id = nullif(current_setting('app.org_id', true), '')::uuid);
--> statement-breakpoint
CREATE POLICY agent_keys_tenant ON agent_keys
  USING (org_id = nullif(current_setting('app.org_id', true), '')::uuid)
  WITH CHECK (org_id = nullif(current_setting('app.org_id', true), '')::uuid);
--> statement-breakpoint
CREATE POLICY agent_trust_history_tenant ON agent_trust_history
  USING (org_id = nullif(current_setting('app.org_id', true), '')::uuid)
  WITH CHECK (org_id = nullif(current_setting('app.org_id', true), '')::uuid);
--> statement-breakpoint
-- UUIDv7 (RFC 9562) made in SQL, for rows the database writes itself (trust history, events):
-- time-ordered like the ids src/lib/ids.ts makes, so keyset pagination follows creation order.
-- A random v4 with the 48-bit millisecond time written over its head, the version set to 7, and
-- the sub-millisecond fraction in the 12 bits after it (RFC 9562 method 3), so rows written in
-- the same millisecond still sort by time, to the microsecond. Rows of one statement (a change's
-- events) may share a microsecond: they carry no order among themselves.
CREATE FUNCTION uuid_v7() RETURNS uuid
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  micros bigint := floor(extract(epoch FROM clock_timestamp()) * 1000000)::bigint;
  fraction integer := ((micros % 1000) * 4096 / 1000)::integer;
  bytes bytea := uuid_send(gen_random_uuid());
BEGIN
  bytes := overlay(bytes PLACING substring(int8send(micros / 1000) FROM 3) FROM 1 FOR 6);
  bytes := set_byte(bytes, 6, 112 | (fraction >> 8));
  bytes := set_byte(bytes, 7, fraction & 255);
  RETURN encode(bytes, 'hex')::uuid;
END
$$;
--> statement-breakpoint
-- The trust model (docs/identity.md): a deterministic function of verifiable evidence.
-- Revoked is 0 for good; a suspended agent is capped at 10 while suspended.
CREATE FUNCTION agent_trust_score(
  status text, card_status text, active_keys integer,
  approvals integer, denials integer, suspensions integer
) RETURNS integer
LANGUAGE sql IMMUTABLE AS $$
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
      ))
    )
  END
$$;
--> statement-breakpoint
CREATE FUNCTION agent_risk_tier(score integer) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE
    WHEN score >= 75 THEN 'low'
    WHEN score >= 50 THEN 'medium'
    WHEN score >= 25 THEN 'high'
    ELSE 'critical'
  END
$$;
--> statement-breakpoint
-- Score and tier are derived here, on every write, from the evidence columns: whichever path
-- changes evidence (registration, keys, cards, status, assessment outcomes) gets the same
-- answer in the same statement, with no read-modify-write race.
CREATE FUNCTION agents_derive_trust() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'UPDATE' AND OLD.status = 'revoked' AND NEW.status <> 'revoked' THEN
    RAISE EXCEPTION 'agent % is revoked; revocation is terminal', OLD.id
      USING ERRCODE = 'check_violation', CONSTRAINT = 'agents_revoked_terminal';
  END IF;
  NEW.trust_score := agent_trust_score(NEW.status, NEW.card_status, NEW.active_keys,
    NEW.approvals, NEW.denials, NEW.suspensions);
  NEW.risk_tier := agent_risk_tier(NEW.trust_score);
  IF TG_OP = 'UPDATE' THEN
    NEW.updated_at := now();
  END IF;
  RETURN NEW;
END
$$;
--> statement-breakpoint
CREATE TRIGGER agents_trust BEFORE INSERT OR UPDATE ON agents
  FOR EACH ROW EXECUTE FUNCTION agents_derive_trust();
--> statement-breakpoint
-- The timeline and the outbox events, in the same transaction as the change that caused them.
CREATE FUNCTION agents_record_trust() RETURNS trigger
LANGUAGE plpgsql AS $$
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
  INSERT INTO agent_trust_history (id, org_id, agent_id, reason, status, trust_score, risk_tier,
    previous_score, previous_tier)
  VALUES (uuid_v7(), NEW.org_id, NEW.id, NEW.trust_reason, NEW.status, NEW.trust_score,
    NEW.risk_tier, previous_score, previous_tier);
  IF TG_OP = 'INSERT' THEN
    RETURN NULL;
  END IF;
  data := jsonb_build_object(
    'agent_id', NEW.id, 'principal_id', NEW.principal_id, 'status', NEW.status,
    'trust_score', NEW.trust_score, 'risk_tier', NEW.risk_tier,
    'previous_score', previous_score, 'previous_tier', previous_tier,
    'reason', NEW.trust_reason);
  IF NEW.risk_tier <> previous_tier THEN
    INSERT INTO events (id, org_id, type, data)
    VALUES (uuid_v7(), NEW.org_id, 'agent.trust_changed', data);
  END IF;
  IF NEW.status <> previous_status AND NEW.status IN ('suspended', 'revoked') THEN
    INSERT INTO events (id, org_id, type, data)
    VALUES (uuid_v7(), NEW.org_id, 'agent.' || NEW.status, data);
  END IF;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER agents_trust_record AFTER INSERT OR UPDATE ON agents
  FOR EACH ROW EXECUTE FUNCTION agents_record_trust();
