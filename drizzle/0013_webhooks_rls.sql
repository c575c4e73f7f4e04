-- Endpoints and deliveries change state; attempts are immutable records. No DELETE anywhere:
-- a deleted endpoint is hidden, never removed, so its deliveries stay on record. Only the
-- fan-out trigger (below, as the owner) makes deliveries.
GRANT SELECT, INSERT, UPDATE ON webhook_endpoints TO app_user;
--> statement-breakpoint
GRANT SELECT, UPDATE ON webhook_deliveries TO app_user;
--> statement-breakpoint
GRANT SELECT, INSERT ON webhook_attempts TO app_user;
--> statement-breakpoint
-- The trust list reads the keys' windows; only note_signing_key() writes them.
GRANT SELECT ON signing_keys TO app_user;
--> statement-breakpoint
ALTER TABLE webhook_endpoints ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE webhook_endpoints FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE webhook_deliveries ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE webhook_deliveries FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE webhook_attempts ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE webhook_attempts FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY webhook_endpoints_tenant ON webhook_endpoints
  USING (org_id = nullif(current_setting('app.org_id', true), '')::uuid)
  WITH CHECK (org_id = nullif(current_setting('app.org_id', true), '')::uuid);
--> statement-breakpoint
CREATE POLICY webhook_deliveries_tenant ON webhook_deliveries
  USING (org_id = nullif(current_setting('app.org_id', true), '')::uuid)
  WITH CHECK (org_id = nullif(current_setting('app.org_id', true), '')::uuid);
--> statement-breakpoint
CREATE POLICY webhook_attempts_tenant ON webhook_attempts
  USING (org_id = nullif(current_setting('app.org_id', true), '')::uuid)
  WITH CHECK (org_id = nullif(current_setting('app.org_id', true), '')::uuid);
--> statement-breakpoint
-- The functions below run as their owner (the migration role) and work across orgs, each for
-- one narrow purpose; FORCE applies to owners too, so these policies let them.
CREATE POLICY webhook_endpoints_owner ON webhook_endpoints FOR SELECT TO CURRENT_USER USING (true);
--> statement-breakpoint
CREATE POLICY webhook_deliveries_owner ON webhook_deliveries TO CURRENT_USER
  USING (true) WITH CHECK (true);
--> statement-breakpoint
CREATE POLICY events_owner_insert ON events FOR INSERT TO CURRENT_USER WITH CHECK (true);
--> statement-breakpoint
-- The outbox fans out in the transaction that wrote the event: one delivery per enabled
-- endpoint of the event's org and mode that subscribes to its type (none listed: every type).
-- A delivery is due at once. Its writer finds it by the transaction's time and enqueues it after
-- the commit; the lease gives that a minute before the Cron sweep sends it instead.
CREATE FUNCTION events_fan_out() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
BEGIN
  INSERT INTO webhook_deliveries (id, org_id, event_id, endpoint_id, status, next_attempt_at,
    lease_until, created_at)
  SELECT uuid_v7(), NEW.org_id, NEW.id, e.id, 'pending', now(), now() + interval '60 seconds',
    now()
  FROM webhook_endpoints e
  WHERE e.org_id = NEW.org_id AND e.livemode = NEW.livemode
    AND e.status = 'enabled' AND e.deleted_at IS NULL
    AND (cardinality(e.event_types) = 0 OR NEW.type = ANY (e.event_types));
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER events_fan_out AFTER INSERT ON events
  FOR EACH ROW EXECUTE FUNCTION events_fan_out();
--> statement-breakpoint
-- The Cron sweep's backstop: due deliveries with no message in flight (never enqueued, or the
-- message was lost), oldest first, leased so the next sweep does not send them again. A
-- delivery whose endpoint was disabled or deleted meanwhile (a fan-out racing the change) is
-- cancelled, never sent.
CREATE FUNCTION webhook_deliveries_due(max_rows integer, lease_seconds integer)
RETURNS TABLE (id uuid, org_id uuid)
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = public, pg_temp AS $$
BEGIN
  UPDATE webhook_deliveries d
  SET status = 'cancelled', next_attempt_at = NULL, lease_until = NULL, completed_at = now()
  FROM webhook_endpoints ep
  WHERE ep.org_id = d.org_id AND ep.id = d.endpoint_id AND d.status = 'pending'
    AND (ep.status <> 'enabled' OR ep.deleted_at IS NOT NULL);
  RETURN QUERY
  UPDATE webhook_deliveries d SET lease_until = now() + make_interval(secs => lease_seconds)
  WHERE d.id IN (
    SELECT w.id FROM webhook_deliveries w
    WHERE w.status = 'pending' AND w.next_attempt_at <= now()
      AND (w.lease_until IS NULL OR w.lease_until < now())
    ORDER BY w.next_attempt_at
    LIMIT max_rows
    FOR UPDATE SKIP LOCKED)
  RETURNING d.id, d.org_id;
END
$$;
--> statement-breakpoint
REVOKE ALL ON FUNCTION webhook_deliveries_due(integer, integer) FROM PUBLIC;
--> statement-breakpoint
GRANT EXECUTE ON FUNCTION webhook_deliveries_due(integer, integer) TO app_user;
--> statement-breakpoint
-- Notes the current signing key. A key not current before closes the previous key's window
-- and announces `key.rotation` once to every org and mode that has an endpoint for it:
-- concurrent sweeps serialise on the advisory lock, and a key already current is a no-op.
-- Only a real Ed25519 public key under its own RFC 7638 thumbprint is accepted. Returns
-- whether it rotated.
CREATE FUNCTION note_signing_key(key_id text, jwk jsonb) RETURNS boolean
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE
  previous text;
  thumbprint text;
  rotation_events uuid[];
BEGIN
  IF jwk->>'kty' IS DISTINCT FROM 'OKP' OR jwk->>'crv' IS DISTINCT FROM 'Ed25519'
     OR jwk->>'x' !~ '^[A-Za-z0-9_-]{43}$' OR jwk ? 'd' THEN
    RAISE EXCEPTION 'not an Ed25519 public JWK' USING ERRCODE = 'check_violation';
  END IF;
  thumbprint := rtrim(translate(encode(sha256(convert_to(
    format('{"crv":"Ed25519","kty":"OKP","x":"%s"}', jwk->>'x'), 'UTF8')), 'base64'),
    '+/', '-_'), '=');
  IF key_id IS DISTINCT FROM thumbprint THEN
    RAISE EXCEPTION 'kid is not the key''s RFC 7638 thumbprint' USING ERRCODE = 'check_violation';
  END IF;
  IF EXISTS (SELECT 1 FROM signing_keys WHERE kid = key_id AND retired_at IS NULL) THEN
    RETURN false;
  END IF;
  PERFORM pg_advisory_xact_lock(hashtext('note_signing_key'));
  IF EXISTS (SELECT 1 FROM signing_keys WHERE kid = key_id AND retired_at IS NULL) THEN
    RETURN false;
  END IF;
  SELECT kid INTO previous FROM signing_keys WHERE retired_at IS NULL;
  UPDATE signing_keys SET retired_at = now() WHERE retired_at IS NULL;
  -- A key current again keeps the time it was first seen.
  INSERT INTO signing_keys (kid, public_jwk) VALUES (key_id, jwk)
    ON CONFLICT (kid) DO UPDATE SET retired_at = NULL;
  IF previous IS NULL THEN
    RETURN false;
  END IF;
  -- Only where someone listens: an org and mode with an endpoint subscribed to the type.
  WITH announced AS (
    INSERT INTO events (id, org_id, type, data, livemode)
    SELECT uuid_v7(), e.org_id, 'key.rotation',
      jsonb_build_object('kid', key_id, 'previous_kid', previous, 'rotated_at', now()),
      e.livemode
    FROM webhook_endpoints e
    WHERE e.status = 'enabled' AND e.deleted_at IS NULL
      AND (cardinality(e.event_types) = 0 OR 'key.rotation' = ANY (e.event_types))
    GROUP BY e.org_id, e.livemode
    RETURNING id)
  SELECT array_agg(id) INTO rotation_events FROM announced;
  -- The sweep that called this enqueues them right after: no writer's minute to wait out.
  UPDATE webhook_deliveries SET lease_until = NULL WHERE event_id = ANY (rotation_events);
  RETURN true;
END
$$;
--> statement-breakpoint
REVOKE ALL ON FUNCTION note_signing_key(text, jsonb) FROM PUBLIC;
--> statement-breakpoint
GRANT EXECUTE ON FUNCTION note_signing_key(text, jsonb) TO app_user;
--> statement-breakpoint
-- One current key at a time.
CREATE UNIQUE INDEX signing_keys_one_current ON signing_keys ((true)) WHERE retired_at IS NULL;
