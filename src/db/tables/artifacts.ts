/** Evidence: artifacts registered by their SHA-256, each with a signed receipt. */
import { sql } from "drizzle-orm";
import {
  bigint,
  boolean,
  check,
  foreignKey,
  index,
  jsonb,
  pgTable,
  text,
  uniqueIndex,
  uuid,
} from "drizzle-orm/pg-core";
import { createdAtMs } from "./columns";
import { tenantOrg } from "./foundation";
import { auditEntries } from "./ledger";

/**
 * One registration of a digest per org and mode: the file itself never reaches the service.
 * Immutable once written. `receipt` is the signed receipt (a compact JWS) binding the digest
 * to the `artifact.registered` ledger entry named by `audit_*`, which must exist in the same
 * org (the foreign key), so a row can never name an entry the ledger does not hold.
 */
export const artifacts = pgTable(
  "artifacts",
  {
    id: uuid("id").primaryKey(),
    orgId: tenantOrg(),
    livemode: boolean("livemode").notNull(),
    digest: text("digest").notNull(),
    name: text("name").notNull(),
    mediaType: text("media_type"),
    sizeBytes: bigint("size_bytes", { mode: "number" }),
    metadata: jsonb("metadata").$type<Record<string, string>>().notNull().default({}),
    receipt: text("receipt").notNull(),
    createdAt: createdAtMs(),
    auditEntryId: uuid("audit_entry_id").notNull(),
    auditSequence: bigint("audit_sequence", { mode: "number" }).notNull(),
  },
  (t) => [
    uniqueIndex("artifacts_org_id_idx").on(t.orgId, t.id),
    // One registration per digest and mode: what makes a repeat answer the first.
    uniqueIndex("artifacts_digest_idx").on(t.orgId, t.livemode, t.digest),
    // The public proof of existence: a digest's earliest live registration, across orgs.
    index("artifacts_public_digest_idx").on(t.digest, t.createdAt, t.id).where(sql`livemode`),
    index("artifacts_list_idx").on(t.orgId, t.livemode, t.id),
    foreignKey({
      columns: [t.orgId, t.auditSequence],
      foreignColumns: [auditEntries.orgId, auditEntries.sequence],
      name: "artifacts_audit_entry_fk",
    }),
    check("artifacts_digest_check", sql`${t.digest} ~ '^sha256:[0-9a-f]{64}$'`),
    check("artifacts_name_check", sql`char_length(${t.name}) between 1 and 500`),
    check(
      "artifacts_media_type_check",
      sql`${t.mediaType} is null or char_length(${t.mediaType}) between 3 and 255`,
    ),
    check("artifacts_size_check", sql`${t.sizeBytes} is null or ${t.sizeBytes} >= 0`),
    check("artifacts_metadata_check", sql`jsonb_typeof(${t.metadata}) = 'object'`),
  ],
);
