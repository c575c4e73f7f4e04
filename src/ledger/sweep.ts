import { sql } from "drizzle-orm";
import { database } from "../db/client";
import type { Env } from "../env";
import { ledgerOf } from "./ledger";

/** Orgs anchored per Cron run; the rest wait for the next minute (each DO's alarm also runs). */
const ORGS_PER_SWEEP = 500;

/**
 * The Cron Trigger's anchoring sweep: asks every org ledger with entries that no checkpoint
 * covers yet to build one. The DO alarm does the same per org; this catches any alarm lost.
 */
export async function anchorPendingLedgers(
  env: Env,
): Promise<{ anchored: number; failed: number }> {
  const db = database(env);
  const { rows } = await db.execute<{ org_id: string }>(
    sql`select org_id from ledger_orgs_awaiting_checkpoint(${ORGS_PER_SWEEP})`,
  );
  const results = await Promise.allSettled(
    rows.map(({ org_id }) => ledgerOf(env, org_id).anchor(org_id)),
  );
  const failed = results.filter((r) => r.status === "rejected").length;
  if (failed > 0) console.error(JSON.stringify({ msg: "anchoring sweep failures", failed }));
  return { anchored: results.length - failed, failed };
}
