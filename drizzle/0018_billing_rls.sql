-- Accounts, the meter and checkouts change state: UPDATE too. Processed provider events are
-- immutable records: SELECT and INSERT only. No DELETE anywhere.
GRANT SELECT, INSERT, UPDATE ON billing_accounts, billing_usage, billing_checkouts TO app_user;
--> statement-breakpoint
GRANT SELECT, INSERT ON billing_provider_events TO app_user;
--> statement-breakpoint
ALTER TABLE billing_accounts ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE billing_accounts FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE billing_usage ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE billing_usage FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE billing_checkouts ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE billing_checkouts FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE billing_provider_events ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE billing_provider_events FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY billing_accounts_tenant ON billing_accounts
  USING (org_id = nullif(current_setting('app.org_id', true), '')::uuid)
  WITH CHECK (org_id = nullif(current_setting('app.org_id', true), '')::uuid);
--> statement-breakpoint
CREATE POLICY billing_usage_tenant ON billing_usage
  USING (org_id = nullif(current_setting('app.org_id', true), '')::uuid)
  WITH CHECK (org_id = nullif(current_setting('app.org_id', true), '')::uuid);
--> statement-breakpoint
CREATE POLICY billing_checkouts_tenant ON billing_checkouts
  USING (org_id = nullif(current_setting('app.org_id', true), '')::uuid)
  WITH CHECK (org_id = nullif(current_setting('app.org_id', true), '')::uuid);
--> statement-breakpoint
CREATE POLICY billing_provider_events_tenant ON billing_provider_events
  USING (org_id = nullif(current_setting('app.org_id', true), '')::uuid)
  WITH CHECK (org_id = nullif(current_setting('app.org_id', true), '')::uuid);
--> statement-breakpoint
-- The provider's completion webhook carries no tenant credential: it names a Checkout Session
-- the service created, and this lookup (by that id only) finds the org it belongs to.
CREATE POLICY billing_checkouts_by_session ON billing_checkouts FOR SELECT
  USING (id = nullif(current_setting('app.checkout_session', true), ''));
--> statement-breakpoint
-- The meter's guard: called under the meter row's lock with whether one more billable
-- assessment would pass the cap; raising fails the assessment's transaction, so concurrent
-- calls can never meter past the cap (the Worker answers 402 spending_cap_reached).
CREATE FUNCTION billing_refuse_if(over boolean) RETURNS integer
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  IF over THEN
    RAISE EXCEPTION 'spending_cap_reached' USING ERRCODE = 'AR402';
  END IF;
  RETURN 0;
END
$$;
