CREATE TABLE "history_imports" (
	"id" uuid PRIMARY KEY NOT NULL,
	"org_id" uuid DEFAULT nullif(current_setting('app.org_id', true), '')::uuid NOT NULL,
	"livemode" boolean NOT NULL,
	"records" integer NOT NULL,
	"inserted" integer NOT NULL,
	"labels" jsonb NOT NULL,
	"first_occurred_at" timestamp (3) with time zone,
	"last_occurred_at" timestamp (3) with time zone,
	"digest" text NOT NULL,
	"audit_entry_id" uuid,
	"created_at" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "payment_labels" (
	"id" uuid PRIMARY KEY NOT NULL,
	"org_id" uuid DEFAULT nullif(current_setting('app.org_id', true), '')::uuid NOT NULL,
	"payment_id" uuid NOT NULL,
	"livemode" boolean NOT NULL,
	"label" text NOT NULL,
	"known_at" timestamp (3) with time zone NOT NULL,
	"source" text NOT NULL,
	"feedback_id" uuid,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "payment_labels_label_check" CHECK ("payment_labels"."label" in ('fraud', 'dispute', 'chargeback', 'refund', 'legitimate')),
	CONSTRAINT "payment_labels_source_check" CHECK ("payment_labels"."source" in ('import', 'feedback'))
);
--> statement-breakpoint
CREATE TABLE "payments" (
	"id" uuid PRIMARY KEY NOT NULL,
	"org_id" uuid DEFAULT nullif(current_setting('app.org_id', true), '')::uuid NOT NULL,
	"livemode" boolean NOT NULL,
	"external_id" text,
	"assessment_id" uuid,
	"import_id" uuid,
	"agent_id" uuid,
	"kind" text NOT NULL,
	"counterparty" text,
	"amount" bigint,
	"currency" text,
	"decision" text,
	"occurred_at" timestamp (3) with time zone NOT NULL,
	"record" jsonb,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "payments_decision_check" CHECK ("payments"."decision" in ('approve', 'review', 'deny'))
);
--> statement-breakpoint
CREATE TABLE "risk_models" (
	"id" uuid PRIMARY KEY NOT NULL,
	"org_id" uuid DEFAULT nullif(current_setting('app.org_id', true), '')::uuid NOT NULL,
	"livemode" boolean NOT NULL,
	"status" text NOT NULL,
	"version" integer,
	"as_of" timestamp (3) with time zone NOT NULL,
	"test_clock_id" uuid,
	"label_delay_seconds" integer NOT NULL,
	"training_window_seconds" integer NOT NULL,
	"targets" jsonb NOT NULL,
	"counts" jsonb,
	"features" jsonb,
	"metrics" jsonb,
	"params" jsonb,
	"params_digest" text,
	"card" text,
	"failure_reason" text,
	"created_at" timestamp (3) with time zone NOT NULL,
	"trained_at" timestamp (3) with time zone,
	"activated_at" timestamp (3) with time zone,
	CONSTRAINT "risk_models_status_check" CHECK ("risk_models"."status" in ('training', 'ready', 'active', 'shadow', 'retired', 'failed'))
);
--> statement-breakpoint
CREATE TABLE "test_clocks" (
	"id" uuid PRIMARY KEY NOT NULL,
	"org_id" uuid DEFAULT nullif(current_setting('app.org_id', true), '')::uuid NOT NULL,
	"name" text,
	"frozen_time" timestamp (3) with time zone NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
-- The target of the org-scoped foreign key below; created first, the key needs it.
CREATE UNIQUE INDEX "payments_org_id_key" ON "payments" USING btree ("org_id","id");--> statement-breakpoint
ALTER TABLE "history_imports" ADD CONSTRAINT "history_imports_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "payment_labels" ADD CONSTRAINT "payment_labels_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "payment_labels" ADD CONSTRAINT "payment_labels_payment_fk" FOREIGN KEY ("org_id","payment_id") REFERENCES "public"."payments"("org_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "payments" ADD CONSTRAINT "payments_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "risk_models" ADD CONSTRAINT "risk_models_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "test_clocks" ADD CONSTRAINT "test_clocks_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "history_imports_org_idx" ON "history_imports" USING btree ("org_id","livemode","created_at","id");--> statement-breakpoint
CREATE INDEX "payment_labels_payment_idx" ON "payment_labels" USING btree ("org_id","payment_id","known_at");--> statement-breakpoint
CREATE UNIQUE INDEX "payment_labels_feedback_idx" ON "payment_labels" USING btree ("org_id","feedback_id") WHERE "payment_labels"."feedback_id" is not null;--> statement-breakpoint
CREATE UNIQUE INDEX "payments_external_idx" ON "payments" USING btree ("org_id","livemode","external_id") WHERE "payments"."external_id" is not null;--> statement-breakpoint
CREATE UNIQUE INDEX "payments_assessment_idx" ON "payments" USING btree ("org_id","assessment_id") WHERE "payments"."assessment_id" is not null;--> statement-breakpoint
CREATE INDEX "payments_agent_idx" ON "payments" USING btree ("org_id","livemode","agent_id","occurred_at");--> statement-breakpoint
CREATE INDEX "payments_counterparty_idx" ON "payments" USING btree ("org_id","livemode","counterparty","occurred_at");--> statement-breakpoint
CREATE INDEX "payments_time_idx" ON "payments" USING btree ("org_id","livemode","occurred_at");--> statement-breakpoint
CREATE INDEX "risk_models_org_idx" ON "risk_models" USING btree ("org_id","livemode","created_at","id");--> statement-breakpoint
CREATE UNIQUE INDEX "risk_models_one_active_idx" ON "risk_models" USING btree ("org_id","livemode") WHERE "risk_models"."status" = 'active';--> statement-breakpoint
CREATE UNIQUE INDEX "risk_models_one_shadow_idx" ON "risk_models" USING btree ("org_id","livemode") WHERE "risk_models"."status" = 'shadow';--> statement-breakpoint
CREATE UNIQUE INDEX "risk_models_version_idx" ON "risk_models" USING btree ("org_id","version");--> statement-breakpoint
CREATE INDEX "test_clocks_org_idx" ON "test_clocks" USING btree ("org_id","created_at","id");--> statement-breakpoint

-- ---------------------------------------------------------------------------------------------
-- Payment history, labels, imports, test clocks and risk models (issue 39; docs/history.md,
-- docs/risk-model.md). Tenant isolation as everywhere: row-level security on org_id.
-- ---------------------------------------------------------------------------------------------

-- History and labels are appended, never changed (an import's record is a fact of the past;
-- a later label supersedes an earlier one). Test clocks move and are deleted; models change
-- status.
GRANT SELECT, INSERT ON payments, payment_labels, history_imports TO app_user;
--> statement-breakpoint
GRANT SELECT, INSERT, UPDATE, DELETE ON test_clocks TO app_user;
--> statement-breakpoint
GRANT SELECT, INSERT, UPDATE ON risk_models TO app_user;
--> statement-breakpoint
ALTER TABLE payments ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE payments FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY payments_tenant ON payments
  USING (org_id = nullif(current_setting('app.org_id', true), '')::uuid)
  WITH CHECK (org_id = nullif(current_setting('app.org_id', true), '')::uuid);
--> statement-breakpoint
ALTER TABLE payment_labels ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE payment_labels FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY payment_labels_tenant ON payment_labels
  USING (org_id = nullif(current_setting('app.org_id', true), '')::uuid)
  WITH CHECK (org_id = nullif(current_setting('app.org_id', true), '')::uuid);
--> statement-breakpoint
ALTER TABLE history_imports ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE history_imports FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY history_imports_tenant ON history_imports
  USING (org_id = nullif(current_setting('app.org_id', true), '')::uuid)
  WITH CHECK (org_id = nullif(current_setting('app.org_id', true), '')::uuid);
--> statement-breakpoint
ALTER TABLE test_clocks ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE test_clocks FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY test_clocks_tenant ON test_clocks
  USING (org_id = nullif(current_setting('app.org_id', true), '')::uuid)
  WITH CHECK (org_id = nullif(current_setting('app.org_id', true), '')::uuid);
--> statement-breakpoint
ALTER TABLE risk_models ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE risk_models FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY risk_models_tenant ON risk_models
  USING (org_id = nullif(current_setting('app.org_id', true), '')::uuid)
  WITH CHECK (org_id = nullif(current_setting('app.org_id', true), '')::uuid);
--> statement-breakpoint

-- Every assessment is a payment (or action) of the org's history, with the assessment's id:
-- written by a trigger so that the persist statement, planned once per session, is unchanged
-- and no path that stores an assessment can forget it. SECURITY INVOKER: the caller's write,
-- under the caller's row-level security.
CREATE FUNCTION payments_from_assessment() RETURNS trigger
LANGUAGE plpgsql SECURITY INVOKER
SET search_path = public, pg_temp
AS $$
BEGIN
  INSERT INTO payments (id, org_id, livemode, assessment_id, agent_id, kind, counterparty,
                        amount, currency, decision, occurred_at)
  VALUES (NEW.id, NEW.org_id, NEW.livemode, NEW.id, NEW.agent_id, NEW.kind, NEW.counterparty,
          NEW.amount, NEW.currency, NEW.decision, NEW.created_at)
  ON CONFLICT DO NOTHING;
  RETURN NULL;
END
$$;
--> statement-breakpoint
-- Named to fire before assessments_erase_if_principal_erased (triggers fire in name order), so
-- that the payment exists when an erased principal's assessment is erased as it is stored.
CREATE TRIGGER assessments_append_payment AFTER INSERT ON assessments
  FOR EACH ROW EXECUTE FUNCTION payments_from_assessment();
--> statement-breakpoint

-- A feedback label is the payment's label from the moment it was received: the feedback row's
-- `created_at` (its test clock's time when the label was sent under one).
CREATE FUNCTION payment_label_from_feedback() RETURNS trigger
LANGUAGE plpgsql SECURITY INVOKER
SET search_path = public, pg_temp
AS $$
BEGIN
  INSERT INTO payment_labels (id, org_id, payment_id, livemode, label, known_at, source,
                              feedback_id)
  SELECT NEW.id, NEW.org_id, p.id, NEW.livemode, NEW.label, NEW.created_at, 'feedback', NEW.id
  FROM payments p WHERE p.assessment_id = NEW.assessment_id
  ON CONFLICT DO NOTHING;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER assessment_feedback_label AFTER INSERT ON assessment_feedback
  FOR EACH ROW EXECUTE FUNCTION payment_label_from_feedback();
--> statement-breakpoint

-- What was assessed before this migration is history too.
INSERT INTO payments (id, org_id, livemode, assessment_id, agent_id, kind, counterparty, amount,
                      currency, decision, occurred_at)
SELECT a.id, a.org_id, a.livemode, a.id, a.agent_id, a.kind, a.counterparty, a.amount,
       a.currency, a.decision, a.created_at
FROM assessments a;
--> statement-breakpoint
INSERT INTO payment_labels (id, org_id, payment_id, livemode, label, known_at, source, feedback_id)
SELECT f.id, f.org_id, f.assessment_id, f.livemode, f.label, f.created_at, 'feedback', f.id
FROM assessment_feedback f;

--> statement-breakpoint

-- Erasure reaches the history (docs/identity.md, "What erasure reaches"): the counterparty
-- digest of a message or call (a SHA-256 of a phone number or an address, which anyone can
-- recompute from a guess) and an imported record's payee are cleared for an erased principal's
-- agents; a payment's payee, a merchant, stays, as it does in `assessments`. SECURITY DEFINER:
-- the application role only reads and inserts payments.
CREATE FUNCTION erase_payment_copies(payment_ids uuid[]) RETURNS integer
LANGUAGE sql VOLATILE SECURITY DEFINER SET search_path = public, pg_temp AS $$
  WITH erased AS (
    UPDATE payments pm SET
      counterparty = NULL,
      record = CASE WHEN pm.record ? 'payee' THEN jsonb_set(pm.record, '{payee}', 'null'::jsonb)
                    ELSE pm.record END
    WHERE pm.org_id = nullif(current_setting('app.org_id', true), '')::uuid
      AND pm.id = ANY (payment_ids) AND pm.kind NOT IN ('ap2_payment', 'payment')
    RETURNING pm.id
  )
  SELECT count(*)::integer FROM erased
$$;
--> statement-breakpoint
REVOKE ALL ON FUNCTION erase_payment_copies(uuid[]) FROM PUBLIC;
--> statement-breakpoint
-- The erasure itself now reaches the principal's history too (its grants kept: replaced in place).
CREATE OR REPLACE FUNCTION erase_principal_copies(erased_principal uuid) RETURNS integer
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = public, pg_temp AS $$
BEGIN
  PERFORM erase_payment_copies(ARRAY(
    SELECT pm.id FROM payments pm
    JOIN agents a ON a.org_id = pm.org_id AND a.id = pm.agent_id
    JOIN principals p ON p.org_id = a.org_id AND p.id = a.principal_id
    WHERE p.id = erased_principal AND p.status = 'erased'
      AND pm.org_id = nullif(current_setting('app.org_id', true), '')::uuid));
  RETURN erase_assessment_copies(ARRAY(
    SELECT s.id FROM assessments s
    JOIN agents a ON a.org_id = s.org_id AND a.id = s.agent_id
    JOIN principals p ON p.org_id = a.org_id AND p.id = a.principal_id
    WHERE p.id = erased_principal AND p.status = 'erased'
      AND s.org_id = nullif(current_setting('app.org_id', true), '')::uuid));
END
$$;
--> statement-breakpoint
-- A payment of an erased principal's agent stored later (assessed, or imported) is erased as it
-- is stored, as assessments are (0002); the principal's row held FOR SHARE for the same reason.
CREATE FUNCTION payments_erase_if_principal_erased() RETURNS trigger
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE
  principal_status text;
BEGIN
  SELECT p.status INTO principal_status FROM agents a
  JOIN principals p ON p.org_id = a.org_id AND p.id = a.principal_id
  WHERE a.org_id = NEW.org_id AND a.id = NEW.agent_id
  FOR SHARE OF p;
  IF principal_status = 'erased' THEN
    PERFORM erase_payment_copies(ARRAY[NEW.id]);
  END IF;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER payments_erase_if_principal_erased AFTER INSERT ON payments
  FOR EACH ROW WHEN (NEW.agent_id IS NOT NULL AND NEW.kind NOT IN ('ap2_payment', 'payment'))
  EXECUTE FUNCTION payments_erase_if_principal_erased();
