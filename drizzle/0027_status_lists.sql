CREATE TABLE "status_list_entries" (
	"org_id" uuid DEFAULT nullif(current_setting('app.org_id', true), '')::uuid NOT NULL,
	"list" integer NOT NULL,
	"idx" integer NOT NULL,
	"status" smallint DEFAULT 0 NOT NULL,
	"subject_type" text NOT NULL,
	"subject_id" text NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "status_list_entries_org_id_list_idx_pk" PRIMARY KEY("org_id","list","idx"),
	CONSTRAINT "status_list_entries_status_check" CHECK ("status_list_entries"."status" between 0 and 3)
);
--> statement-breakpoint
ALTER TABLE "credential_issuers" ADD COLUMN "status_required" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "status_list_entries" ADD CONSTRAINT "status_list_entries_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "status_list_entries_subject_idx" ON "status_list_entries" USING btree ("org_id","subject_type","subject_id");--> statement-breakpoint
-- The service's own Token Status Lists (issue 42 §2; docs/status-lists.md, "Issued"): the
-- entries are the org's (row-level security on app.org_id, like every org table); the public
-- GET /v1/status-lists/{id} reads one list through status_list_read, which needs no tenant and
-- answers only what the list publishes anyway: the places that are not VALID.
GRANT SELECT, INSERT, UPDATE ON status_list_entries TO app_user;
--> statement-breakpoint
ALTER TABLE status_list_entries ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE status_list_entries FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY status_list_entries_tenant ON status_list_entries
  USING (org_id = nullif(current_setting('app.org_id', true), '')::uuid)
  WITH CHECK (org_id = nullif(current_setting('app.org_id', true), '')::uuid);
--> statement-breakpoint
-- An org's public transparency log id (`logIdFor`, packages/client/src/audit/checkpoint.ts:
-- the first 16 bytes of SHA-256("agent-risk/log/v1\n" || id), hex), indexed: a list's public id
-- names the org by it, never by its internal id.
CREATE INDEX organizations_log_id_idx ON organizations
  ((substr(encode(sha256(('agent-risk/log/v1' || chr(10) || id::text)::bytea), 'hex'), 1, 32)));
--> statement-breakpoint
-- One list of one org, named by its log id: {"entries": [[idx, status], ...]} of its places that
-- are not VALID, or NULL when no org has that log id (the route's 404).
CREATE FUNCTION status_list_read(p_log text, p_list integer) RETURNS json
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp AS $$
  SELECT json_build_object('entries', coalesce(
    (SELECT json_agg(json_build_array(e.idx, e.status) ORDER BY e.idx)
       FROM status_list_entries e
      WHERE e.org_id = o.id AND e.list = p_list AND e.status <> 0),
    '[]'::json))
  FROM organizations o
  WHERE substr(encode(sha256(('agent-risk/log/v1' || chr(10) || o.id::text)::bytea), 'hex'), 1, 32)
    = p_log
$$;
--> statement-breakpoint
REVOKE ALL ON FUNCTION status_list_read(text, integer) FROM PUBLIC;
--> statement-breakpoint
GRANT EXECUTE ON FUNCTION status_list_read(text, integer) TO app_user;
