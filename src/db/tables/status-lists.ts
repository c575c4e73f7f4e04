/**
 * The statuses the service publishes in its own Token Status Lists (docs/status-lists.md,
 * "Issued"): one row per revocable thing whose place is known, VALID (0) until a revocation sets
 * it in the same write as the change. A place with no row is VALID too. The public list is read
 * through `status_list_read` (drizzle/0027), which needs no tenant.
 */
import { sql } from "drizzle-orm";
import {
  check,
  integer,
  pgTable,
  primaryKey,
  smallint,
  text,
  timestamp,
  uniqueIndex,
} from "drizzle-orm/pg-core";
import { tenantOrg } from "./foundation";

export const statusListEntries = pgTable(
  "status_list_entries",
  {
    orgId: tenantOrg(),
    /** The list's number within the org (src/status-lists/indices.ts). */
    list: integer("list").notNull(),
    idx: integer("idx").notNull(),
    status: smallint("status").notNull().default(0),
    /** What the place is of: `assessment`, `agent`, `agent_key`, `action_grant`. */
    subjectType: text("subject_type").notNull(),
    subjectId: text("subject_id").notNull(),
    updatedAt: timestamp("updated_at", { withTimezone: true, precision: 3 }).notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.orgId, t.list, t.idx] }),
    uniqueIndex("status_list_entries_subject_idx").on(t.orgId, t.subjectType, t.subjectId),
    check("status_list_entries_status_check", sql`${t.status} between 0 and 3`),
  ],
);
