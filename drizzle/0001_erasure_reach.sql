ALTER TABLE "mandates" ADD COLUMN "erased_at" timestamp (3) with time zone;--> statement-breakpoint
ALTER TABLE "mandates" ADD COLUMN "erased_fields" text[];--> statement-breakpoint
-- ---------------------------------------------------------------------------------------------
-- Erasure reaches every copy (docs/identity.md, "What erasure reaches")
-- ---------------------------------------------------------------------------------------------

-- The members of a stored mandate that carry a principal's personal data: the client's risk
-- signals (device, network, location), the payment instrument, an AP2 checkout's cart (buyer and
-- shipping details), and the recipients of a message or call. One list for every kind: a member
-- of one of these names is erased wherever it appears at the top of a mandate.
CREATE FUNCTION mandate_personal_fields() RETURNS text[]
LANGUAGE sql IMMUTABLE SET search_path = public, pg_temp AS $$
  SELECT ARRAY['risk_data', 'payment_instrument', 'checkout_jwt', 'to', 'cc', 'bcc', 'recipient',
               'recipients', 'phone', 'email']
$$;
--> statement-breakpoint
-- Runs in the erasure's transaction, after the principal's row became `erased`, for the org of
-- the request (app.org_id; FORCE row-level security holds for this function's owner too, and the
-- org is named again for an owner that bypasses it). For every assessment of an agent that acts
-- for the principal:
-- - the mandate's personal members (above) are overwritten with JSON null, their names kept in
--   `erased_fields` and the time in `erased_at`; a mandate erased before is left as it is, so a
--   repeated erasure reaches only what was stored since;
-- - the model's recorded inputs lose the recipient and the country read from risk_data, and the
--   counterparty digest of a message or call (a SHA-256 of a phone number or an address, which
--   anyone can recompute from a guess) is cleared; a payment's payee, a merchant, stays.
-- Nothing the audit ledger hashed changes: its entries hold digests of the assessment records,
-- and verification recomputes the chain from the entries alone.
-- Answers how many mandates it erased. Only SECURITY DEFINER can write these rows: the
-- application role keeps SELECT and INSERT alone on assessments and mandates.
CREATE FUNCTION erase_principal_copies(erased_principal uuid) RETURNS integer
LANGUAGE sql VOLATILE SECURITY DEFINER SET search_path = public, pg_temp AS $$
  WITH owned AS (
    SELECT s.id, s.mandate_id FROM assessments s
    JOIN agents a ON a.org_id = s.org_id AND a.id = s.agent_id
    JOIN principals p ON p.org_id = a.org_id AND p.id = a.principal_id
    WHERE p.id = erased_principal AND p.status = 'erased'
      AND s.org_id = nullif(current_setting('app.org_id', true), '')::uuid
  ),
  erased_mandates AS (
    UPDATE mandates m SET
      mandate = m.mandate || coalesce(
        (SELECT jsonb_object_agg(f, 'null'::jsonb) FROM unnest(mandate_personal_fields()) f
         WHERE m.mandate ? f), '{}'::jsonb),
      erased_fields = ARRAY(
        SELECT f FROM unnest(mandate_personal_fields()) f WHERE m.mandate ? f ORDER BY f),
      erased_at = now()
    FROM owned o
    WHERE m.org_id = nullif(current_setting('app.org_id', true), '')::uuid
      AND m.id = o.mandate_id AND m.assessment_id = o.id AND m.erased_at IS NULL
    RETURNING m.id
  ),
  erased_assessments AS (
    UPDATE assessments s SET
      inputs = CASE WHEN s.inputs IS NULL THEN NULL
        ELSE jsonb_set(s.inputs || '{"geo": null}'::jsonb, '{facts,recipient}', 'null'::jsonb)
      END,
      counterparty = CASE WHEN s.kind = 'ap2_payment' THEN s.counterparty END
    FROM owned o
    WHERE s.org_id = nullif(current_setting('app.org_id', true), '')::uuid AND s.id = o.id
    RETURNING s.id
  )
  SELECT count(*)::integer FROM erased_mandates
$$;
--> statement-breakpoint
REVOKE ALL ON FUNCTION erase_principal_copies(uuid) FROM PUBLIC;
--> statement-breakpoint
GRANT EXECUTE ON FUNCTION erase_principal_copies(uuid) TO app_user;
