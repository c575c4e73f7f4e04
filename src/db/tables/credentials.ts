/** Who may sign the root of an AP2 credential chain: the org's credential issuers. */
import { sql } from "drizzle-orm";
import {
  boolean,
  check,
  foreignKey,
  index,
  jsonb,
  pgTable,
  text,
  timestamp,
  uuid,
} from "drizzle-orm/pg-core";
import { createdAt } from "./columns";
import { tenantOrg } from "./foundation";
import { principals } from "./identity";

/** A public JWK as stored: the RFC 7638 members, and the issuer's `kid` when it named one. */
export type IssuerJwk = { kty: string; crv: string; x: string; y?: string; kid?: string };

/**
 * One issuer key's network digest (src/ap2-credentials/issuer-digests.ts): under network key `key_id`,
 * `digest` is the keyed digest of the key's RFC 7638 thumbprint, and `kid` the name a root
 * header would use for the key (its JWK `kid`, else its thumbprint).
 */
export type IssuerNetworkDigest = { key_id: string; kid: string; digest: string };

/**
 * A credential issuer: inline public keys (`jwks`) or an https JWKS URL whose last good answer
 * is cached in `fetched_jwks` (docs/credentials.md, "Trust anchors"). Revoked is terminal.
 */
export const credentialIssuers = pgTable(
  "credential_issuers",
  {
    id: uuid("id").primaryKey(),
    orgId: tenantOrg(),
    name: text("name").notNull(),
    /** Inline keys; null for an issuer whose keys come from `jwks_url`. */
    jwks: jsonb("jwks").$type<IssuerJwk[]>(),
    jwksUrl: text("jwks_url"),
    /** Set when the key is the user's own (a principal signs its own mandates). */
    principalId: uuid("principal_id"),
    status: text("status", { enum: ["active", "revoked"] })
      .notNull()
      .default("active"),
    /** The keys of the last JWKS fetched from `jwks_url` that could be read, and its ETag. */
    fetchedJwks: jsonb("fetched_jwks").$type<IssuerJwk[]>(),
    fetchedAt: timestamp("fetched_at", { withTimezone: true, precision: 3 }),
    etag: text("etag"),
    /** The last attempt to fetch `jwks_url`, successful or not: what rate-limits refetches. */
    fetchAttemptedAt: timestamp("fetch_attempted_at", { withTimezone: true, precision: 3 }),
    /**
     * The network digests of the keys trusted now (inline or last fetched), under every network
     * key: what lets the assess path's one context read ask the network about the issuer key a
     * root could name before the chain is verified (docs/architecture.md, "ADR: the learned model and network signals on the assess path", as built for issue 41). Null until written.
     */
    networkDigests: jsonb("network_digests").$type<IssuerNetworkDigest[]>(),
    /**
     * The constraint types every open mandate this issuer roots must disclose (AP2 #339: a
     * selectively disclosable constraint the holder withheld is `constraint_withheld`).
     */
    requiredConstraints: text("required_constraints").array().notNull().default(sql`'{}'::text[]`),
    /**
     * Whether a credential whose root or hop names a status list (draft-ietf-oauth-status-list)
     * may be approved when that list cannot be had: false approves on the rest of the evidence,
     * true reviews (docs/status-lists.md, "Checked").
     */
    statusRequired: boolean("status_required").notNull().default(false),
    createdAt: createdAt(),
    revokedAt: timestamp("revoked_at", { withTimezone: true }),
  },
  (t) => [
    foreignKey({
      columns: [t.orgId, t.principalId],
      foreignColumns: [principals.orgId, principals.id],
      name: "credential_issuers_principal_fk",
    }),
    index("credential_issuers_status_idx").on(t.orgId, t.status, t.id),
    check("credential_issuers_status_check", sql`${t.status} in ('active', 'revoked')`),
    check("credential_issuers_keys_check", sql`(${t.jwks} is null) <> (${t.jwksUrl} is null)`),
    check(
      "credential_issuers_revoked_check",
      sql`(${t.status} = 'revoked') = (${t.revokedAt} is not null)`,
    ),
  ],
);
