import { sql } from "drizzle-orm";
import { timestamp } from "drizzle-orm/pg-core";

/**
 * Org-scoped rows default their `org_id` to the tenant set for the transaction, so route code
 * never passes it and cannot pass the wrong one; RLS `WITH CHECK` rejects anything else.
 */
export const currentOrg = sql`nullif(current_setting('app.org_id', true), '')::uuid`;

export const createdAt = () =>
  timestamp("created_at", { withTimezone: true }).notNull().defaultNow();
