-- What an agent was seen from (issue 42 §4, docs/rails.md "Checkout telemetry"): keyed digests
-- of the devices and networks of the ACP checkout telemetry a request sends in `risk_data`,
-- per agent and mode, never the raw values. The assess path reads whether the request's
-- digests are new for its agent in the context batch, and writes them after the response.
CREATE TABLE agent_telemetry (
  org_id uuid NOT NULL REFERENCES organizations(id),
  livemode boolean NOT NULL,
  kind text NOT NULL CHECK (kind IN ('device', 'network')),
  digest text NOT NULL CHECK (length(digest) = 43),
  agent_id uuid NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
  first_seen_at timestamptz NOT NULL,
  last_seen_at timestamptz NOT NULL,
  PRIMARY KEY (org_id, livemode, kind, digest, agent_id)
);
--> statement-breakpoint
CREATE INDEX agent_telemetry_agent_idx ON agent_telemetry (agent_id);
--> statement-breakpoint
GRANT SELECT, INSERT, UPDATE ON agent_telemetry TO app_user;
--> statement-breakpoint
ALTER TABLE agent_telemetry ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE agent_telemetry FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY agent_telemetry_tenant ON agent_telemetry
  USING (org_id = nullif(current_setting('app.org_id', true), '')::uuid)
  WITH CHECK (org_id = nullif(current_setting('app.org_id', true), '')::uuid);
