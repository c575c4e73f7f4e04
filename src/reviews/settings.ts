import { sql } from "drizzle-orm";
import type { Tenant } from "../auth/tenant";
import { reviewSettings } from "../db/schema";
import { REVIEW_SLA_DEFAULT_SECONDS } from "../schemas/reviews";

export interface ReviewSettingsView {
  object: "review_settings";
  sla_seconds: number;
  default: boolean;
}

function view(row: { slaSeconds: number } | undefined): ReviewSettingsView {
  return {
    object: "review_settings",
    sla_seconds: row?.slaSeconds ?? REVIEW_SLA_DEFAULT_SECONDS,
    default: row === undefined,
  };
}

/** The org's review settings, or the defaults while it has set none. */
export async function readReviewSettings(tenant: Tenant): Promise<ReviewSettingsView> {
  const [rows] = await tenant.batch((db) => [db.select().from(reviewSettings)]);
  return view(rows[0]);
}

/**
 * Sets the org's SLA. Items opened from now on are due after it; open items keep the due time
 * they opened with, so nobody's deadline moves under them.
 */
export async function updateReviewSettings(
  tenant: Tenant,
  slaSeconds: number,
): Promise<ReviewSettingsView> {
  const [rows] = await tenant.batch((db) => [
    db
      .insert(reviewSettings)
      .values({ slaSeconds })
      .onConflictDoUpdate({
        target: reviewSettings.orgId,
        set: { slaSeconds, updatedAt: sql`now()` },
      })
      .returning(),
  ]);
  return view(rows[0]);
}
