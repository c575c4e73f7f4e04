CREATE TABLE "agent_keys" (
	"org_id" uuid DEFAULT nullif(current_setting('app.org_id', true), '')::uuid NOT NULL,
	"thumbprint" text NOT NULL,
	"agent_id" uuid NOT NULL,
	"jwk" jsonb NOT NULL,
	"kty" text NOT NULL,
	"crv" text,
	"alg" text NOT NULL,
	"status" text DEFAULT 'active' NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"revoked_at" timestamp with time zone,
	CONSTRAINT "agent_keys_org_id_thumbprint_pk" PRIMARY KEY("org_id","thumbprint"),
	CONSTRAINT "agent_keys_status_check" CHECK ("agent_keys"."status" in ('active', 'revoked'))
);
--> statement-breakpoint
CREATE TABLE "agent_trust_history" (
	"id" uuid PRIMARY KEY NOT NULL,
	"org_id" uuid DEFAULT nullif(current_setting('app.org_id', true), '')::uuid NOT NULL,
	"seq" bigserial NOT NULL,
	"agent_id" uuid NOT NULL,
	"reason" text NOT NULL,
	"status" text NOT NULL,
	"trust_score" integer NOT NULL,
	"risk_tier" text NOT NULL,
	"previous_score" integer,
	"previous_tier" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "agents" (
	"id" uuid PRIMARY KEY NOT NULL,
	"org_id" uuid DEFAULT nullif(current_setting('app.org_id', true), '')::uuid NOT NULL,
	"principal_id" uuid NOT NULL,
	"name" text NOT NULL,
	"description" text,
	"metadata" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"status" text DEFAULT 'active' NOT NULL,
	"trust_score" integer DEFAULT 0 NOT NULL,
	"risk_tier" text DEFAULT 'critical' NOT NULL,
	"trust_reason" text NOT NULL,
	"active_keys" integer DEFAULT 0 NOT NULL,
	"approvals" integer DEFAULT 0 NOT NULL,
	"reviews" integer DEFAULT 0 NOT NULL,
	"denials" integer DEFAULT 0 NOT NULL,
	"suspensions" integer DEFAULT 0 NOT NULL,
	"card_status" text DEFAULT 'unverified' NOT NULL,
	"card_reasons" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"card_signatures" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"card_digest" text,
	"card_version" text,
	"card_name" text,
	"card_url" text,
	"card_source_url" text,
	"card_checked_at" timestamp with time zone,
	"card_verified_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"suspended_at" timestamp with time zone,
	"revoked_at" timestamp with time zone,
	CONSTRAINT "agents_status_check" CHECK ("agents"."status" in ('active', 'suspended', 'revoked')),
	CONSTRAINT "agents_risk_tier_check" CHECK ("agents"."risk_tier" in ('low', 'medium', 'high', 'critical')),
	CONSTRAINT "agents_card_status_check" CHECK ("agents"."card_status" in ('unverified', 'verified', 'invalid'))
);
--> statement-breakpoint
CREATE TABLE "principals" (
	"id" uuid PRIMARY KEY NOT NULL,
	"org_id" uuid DEFAULT nullif(current_setting('app.org_id', true), '')::uuid NOT NULL,
	"type" text NOT NULL,
	"status" text DEFAULT 'active' NOT NULL,
	"wrapped_key" text,
	"ciphertext" text,
	"metadata" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"erased_at" timestamp with time zone,
	CONSTRAINT "principals_type_check" CHECK ("principals"."type" in ('individual', 'company')),
	CONSTRAINT "principals_status_check" CHECK ("principals"."status" in ('active', 'erased')),
	CONSTRAINT "principals_erased_check" CHECK (("principals"."status" = 'erased') = ("principals"."wrapped_key" is null))
);
--> statement-breakpoint
CREATE UNIQUE INDEX "agents_org_id_idx" ON "agents" USING btree ("org_id","id");--> statement-breakpoint
CREATE UNIQUE INDEX "principals_org_id_idx" ON "principals" USING btree ("org_id","id");--> statement-breakpoint
ALTER TABLE "agent_keys" ADD CONSTRAINT "agent_keys_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "agent_keys" ADD CONSTRAINT "agent_keys_agent_fk" FOREIGN KEY ("org_id","agent_id") REFERENCES "public"."agents"("org_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "agent_trust_history" ADD CONSTRAINT "agent_trust_history_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "agent_trust_history" ADD CONSTRAINT "agent_trust_history_agent_fk" FOREIGN KEY ("org_id","agent_id") REFERENCES "public"."agents"("org_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "agents" ADD CONSTRAINT "agents_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "agents" ADD CONSTRAINT "agents_principal_fk" FOREIGN KEY ("org_id","principal_id") REFERENCES "public"."principals"("org_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "principals" ADD CONSTRAINT "principals_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "agent_keys_agent_idx" ON "agent_keys" USING btree ("org_id","agent_id","created_at");--> statement-breakpoint
CREATE INDEX "agent_trust_history_agent_idx" ON "agent_trust_history" USING btree ("org_id","agent_id","seq");--> statement-breakpoint
CREATE INDEX "agents_principal_idx" ON "agents" USING btree ("org_id","principal_id","id");--> statement-breakpoint
CREATE INDEX "agents_card_digest_idx" ON "agents" USING btree ("org_id","card_digest");