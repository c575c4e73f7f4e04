/** The tenancy foundation: users, organizations, memberships and API keys. */
import { sql } from "drizzle-orm";
import {
  check,
  index,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
  uuid,
} from "drizzle-orm/pg-core";
import { createdAt, currentOrg } from "./columns";

export const users = pgTable("users", {
  id: uuid("id").primaryKey(),
  /** The identity provider's `sub`: the only link between a session and a user. */
  idpSubject: text("idp_subject").notNull().unique(),
  email: text("email"),
  createdAt: createdAt(),
});

export const organizations = pgTable("organizations", {
  id: uuid("id").primaryKey(),
  name: text("name").notNull(),
  /** One org per founding user makes `POST /v1/orgs` idempotent even when two calls race. */
  founderUserId: uuid("founder_user_id")
    .notNull()
    .unique()
    .references(() => users.id),
  createdAt: createdAt(),
});

/**
 * The `org_id` of every org-scoped row, written once: the tenant set for the transaction by
 * default (`currentOrg`: route code never passes it), and the org it belongs to.
 */
export const tenantOrg = () =>
  uuid("org_id")
    .notNull()
    .default(currentOrg)
    .references(() => organizations.id);

export const memberships = pgTable(
  "memberships",
  {
    orgId: tenantOrg(),
    userId: uuid("user_id")
      .notNull()
      .references(() => users.id),
    role: text("role", { enum: ["owner", "admin", "member"] }).notNull(),
    createdAt: createdAt(),
  },
  (t) => [
    primaryKey({ columns: [t.orgId, t.userId] }),
    index("memberships_user_idx").on(t.userId),
    check("memberships_role_check", sql`${t.role} in ('owner', 'admin', 'member')`),
  ],
);

export const apiKeys = pgTable(
  "api_keys",
  {
    id: uuid("id").primaryKey(),
    orgId: tenantOrg(),
    name: text("name").notNull(),
    /** Hex SHA-256 of the whole key; the plaintext is never stored. */
    keyHash: text("key_hash").notNull(),
    /** The non-secret head of the key (`aar_live_AbCd`), so people can tell keys apart. */
    prefix: text("prefix").notNull(),
    mode: text("mode", { enum: ["live", "test"] }).notNull(),
    scopes: text("scopes").array().notNull(),
    createdByUserId: uuid("created_by_user_id").references(() => users.id),
    createdAt: createdAt(),
    revokedAt: timestamp("revoked_at", { withTimezone: true }),
  },
  (t) => [
    uniqueIndex("api_keys_key_hash_idx").on(t.keyHash),
    index("api_keys_org_idx").on(t.orgId, t.id),
    check("api_keys_mode_check", sql`${t.mode} in ('live', 'test')`),
  ],
);
