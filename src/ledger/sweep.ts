import { sql } from "drizzle-orm";
import { database } from "../db/client";
import type { Env } from "../env";
import { logError } from "../lib/log";
import { anchorDelay } from "./anchoring";
import { ledgerOf } from "./ledger";

/** Orgs anchored per Cron run; the rest wait for the next minute (each DO's alarm also runs). */
const ORGS_PER_SWEEP = 500;
/** How late an alarm may be before the sweep steps in. */
const ALARM_GRACE_MS = 60_000;

/**
 * The Cron Trigger's anchoring sweep: asks every org ledger whose entries have waited for a
 * checkpoint longer than its alarm should have taken to build one, longest-waiting first. The
 * DO alarm anchors each org on its own; this catches any alarm lost.
 */
export async function anchorPendingLedgers(
  env: Env,
): Promise<{ anchored: number; failed: number }> {
  const db = database(env);
  const { rows } = await db.execute<{ org_id: string }>(
    sql`select org_id from ledger_orgs_awaiting_checkpoint(${ORGS_PER_SWEEP}, ${waitingSince(env)})`,
  );
  const results = await Promise.allSettled(
    rows.map(({ org_id }) => ledgerOf(env, org_id).anchor(org_id)),
  );
  const failed = results.filter((r) => r.status === "rejected").length;
  if (failed > 0) logError("anchoring sweep failures", { failed });
  return { anchored: results.length - failed, failed };
}

/** Entries older than this should have been anchored by their ledger's own alarm. */
function waitingSince(env: Env): string {
  return new Date(Date.now() - anchorDelay(env) - ALARM_GRACE_MS).toISOString();
}
