-- ---------------------------------------------------------------------------------------------
-- Erasure reaches what is stored after it (docs/identity.md, "What erasure reaches")
-- ---------------------------------------------------------------------------------------------

-- 0006 erased an erased principal's copies once, at erasure. Its agents stay usable, so an
-- assessment stored later (or racing the erasure) kept its mandate in the clear. The work per
-- assessment moves to erase_assessment_copies, which erase_principal_copies (replaced in place,
-- its grants kept) and a trigger on new assessments both call.

-- Erases the copies of a principal's personal data that the given assessments keep, in the
-- org of the request (app.org_id; FORCE row-level security holds for this function's owner too,
-- and the org is named again for an owner that bypasses it):
-- - the mandate's personal members (mandate_personal_fields, 0006) are overwritten with JSON
--   null, their names kept in `erased_fields` and the time in `erased_at`; a mandate erased
--   before is left as it is;
-- - the model's recorded inputs lose the recipient and the country read from risk_data, and the
--   counterparty digest of a message or call (a SHA-256 of a phone number or an address, which
--   anyone can recompute from a guess) is cleared; a payment's payee, a merchant, stays.
-- Nothing the audit ledger hashed changes: its entries hold digests of the assessment records,
-- and verification recomputes the chain from the entries alone.
-- Answers how many mandates it erased. Only SECURITY DEFINER can write these rows: the
-- application role keeps SELECT and INSERT alone on assessments and mandates.
CREATE FUNCTION erase_assessment_copies(assessment_ids uuid[]) RETURNS integer
LANGUAGE sql VOLATILE SECURITY DEFINER SET search_path = public, pg_temp AS $$
  WITH erased_mandates AS (
    UPDATE mandates m SET
      mandate = m.mandate || coalesce(
        (SELECT jsonb_object_agg(f, 'null'::jsonb) FROM unnest(mandate_personal_fields()) f
         WHERE m.mandate ? f), '{}'::jsonb),
      erased_fields = ARRAY(
        SELECT f FROM unnest(mandate_personal_fields()) f WHERE m.mandate ? f ORDER BY f),
      erased_at = now()
    WHERE m.org_id = nullif(current_setting('app.org_id', true), '')::uuid
      AND m.assessment_id = ANY (assessment_ids) AND m.erased_at IS NULL
    RETURNING m.id
  ),
  erased_assessments AS (
    UPDATE assessments s SET
      inputs = CASE WHEN s.inputs IS NULL THEN NULL
        ELSE jsonb_set(s.inputs || '{"geo": null}'::jsonb, '{facts,recipient}', 'null'::jsonb)
      END,
      counterparty = CASE WHEN s.kind = 'ap2_payment' THEN s.counterparty END
    WHERE s.org_id = nullif(current_setting('app.org_id', true), '')::uuid
      AND s.id = ANY (assessment_ids)
    RETURNING s.id
  )
  SELECT count(*)::integer FROM erased_mandates
$$;
--> statement-breakpoint
REVOKE ALL ON FUNCTION erase_assessment_copies(uuid[]) FROM PUBLIC;
--> statement-breakpoint
-- Runs in the erasure's transaction, after the principal's row became `erased`: every
-- assessment of every agent that acts for the principal, both modes. A repeated erasure finds
-- the mandates erased already and leaves them (and their erased_at) as they are.
CREATE OR REPLACE FUNCTION erase_principal_copies(erased_principal uuid) RETURNS integer
LANGUAGE sql VOLATILE SECURITY DEFINER SET search_path = public, pg_temp AS $$
  SELECT erase_assessment_copies(ARRAY(
    SELECT s.id FROM assessments s
    JOIN agents a ON a.org_id = s.org_id AND a.id = s.agent_id
    JOIN principals p ON p.org_id = a.org_id AND p.id = a.principal_id
    WHERE p.id = erased_principal AND p.status = 'erased'
      AND s.org_id = nullif(current_setting('app.org_id', true), '')::uuid))
$$;
--> statement-breakpoint
-- An agent stays usable after its principal is erased, so an assessment of it stored later is
-- erased as it is stored: at the end of the statement that inserted it (the ledger object's
-- group commit, whose mandate insert is part of the same statement). The principal's row is
-- held FOR SHARE whatever its status, so an erasure running at the same time either commits
-- first (and this sees `erased`) or waits for this transaction, and then its own search (a
-- later statement, under READ COMMITTED) finds this assessment: no mandate slips between them.
CREATE FUNCTION assessments_erase_if_principal_erased() RETURNS trigger
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE
  principal_status text;
BEGIN
  SELECT p.status INTO principal_status FROM agents a
  JOIN principals p ON p.org_id = a.org_id AND p.id = a.principal_id
  WHERE a.org_id = NEW.org_id AND a.id = NEW.agent_id
  FOR SHARE OF p;
  IF principal_status = 'erased' THEN
    PERFORM erase_assessment_copies(ARRAY[NEW.id]);
  END IF;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER assessments_erase_if_principal_erased AFTER INSERT ON assessments
  FOR EACH ROW WHEN (NEW.agent_id IS NOT NULL)
  EXECUTE FUNCTION assessments_erase_if_principal_erased();
