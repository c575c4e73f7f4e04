import { sql } from "drizzle-orm";
import { database } from "../db/client";
import type { Env } from "../env";
import { logError } from "../lib/log";
import { networkKeys } from "./keys";
import { sendNetworkMessages } from "./queue";

// The network's Cron sweep (docs/network.md, "How contributions flow"): the backstop of the
// nudges a label or an import sends, and the network's upkeep.

/** Members per run; the rest are due at the next one (a minute later). */
export const SWEEP_MAX = 50;
/** Every contributing member is swept at least this often (seconds). */
export const SWEEP_EVERY_SECONDS = 300;

/**
 * One message for each contributing member not swept for SWEEP_EVERY_SECONDS (the function
 * stamps them), and, in the run of each hour's first minute, `network_maintain()`: 180-day
 * retention and every member's label precision. Hourly, not every minute: it reads every
 * contribution, and neither a day-granular retention nor a precision over 180 days moves in a
 * minute. Never throws: each half is logged and tried again at its next run.
 */
export async function sweepNetwork(env: Env, scheduledTime: number): Promise<void> {
  const db = database(env);
  if (networkKeys(env)) {
    try {
      const { rows } = await db.execute<{ org_id: string; livemode: boolean }>(
        sql`select org_id, livemode from network_members_due(${SWEEP_MAX}, ${SWEEP_EVERY_SECONDS})`,
      );
      await sendNetworkMessages(
        env,
        rows.map((row) => ({ org_id: row.org_id, livemode: row.livemode })),
      );
    } catch (error) {
      logError("network members due not read", { error: String(error) });
    }
  }
  if (new Date(scheduledTime).getUTCMinutes() !== 0) return;
  try {
    await db.execute(sql`select network_maintain() as aged`);
  } catch (error) {
    logError("network upkeep failed", { error: String(error) });
  }
}
