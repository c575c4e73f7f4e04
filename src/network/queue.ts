import { sql } from "drizzle-orm";
import type { Database } from "../db/client";
import { type Env, modeOf } from "../env";
import { logError } from "../lib/log";

/**
 * A message of the `network-contributions` queue (NETWORK_QUEUE): contribute what this org's
 * mode has not contributed yet. Everything else is read when it is consumed
 * (src/network/contributions.ts), so duplicates cost a read and change nothing.
 */
export interface NetworkMessage {
  org_id: string;
  livemode: boolean;
}

/**
 * How old a payment or label must be (its `created_at`, seconds) before it is contributed: a
 * transaction still in flight when the consumer reads may commit a row stamped before the
 * consumer's cursor, which a later read past that cursor would never see. 10 s is far above
 * any transaction of this service. The tests set `TEST_NETWORK_SETTLE_SECONDS` (honoured only
 * when ENVIRONMENT is `test`), so what they write is contributed at once.
 */
export function settleSeconds(env: Env): number {
  const forTests = Number(env.TEST_NETWORK_SETTLE_SECONDS);
  if (modeOf(env) === "test" && env.TEST_NETWORK_SETTLE_SECONDS && forTests >= 0) return forTests;
  return 10;
}

/**
 * Sends messages to the network queue; `delaySeconds` holds them until what they are about has
 * settled. Never throws: a message lost is contributed by the Cron sweep a few minutes later.
 */
export async function sendNetworkMessages(
  env: Env,
  messages: readonly NetworkMessage[],
  delaySeconds = 0,
): Promise<void> {
  if (messages.length === 0) return;
  const queue = env.NETWORK_QUEUE;
  if (!queue) {
    logError("network queue not bound", { messages: messages.length });
    return;
  }
  try {
    const options = delaySeconds > 0 ? { delaySeconds } : {};
    await queue.sendBatch(messages.map((body) => ({ body, ...options })));
  } catch (error) {
    logError("network enqueue failed", { messages: messages.length, error: String(error) });
  }
}

/**
 * Whether the calling org contributes in `livemode`: one statement to add to a batch that
 * already runs in the org (a feedback label's, an import's), so knowing costs no round trip.
 */
export function contributesQuery(db: Database, livemode: boolean) {
  return db.execute(sql`select network_cursors(${livemode}) is not null as contributes`);
}

/** The answer of `contributesQuery`. */
export function contributes(result: unknown): boolean {
  const rows = (result as { rows: { contributes: boolean }[] }).rows;
  return rows[0]?.contributes === true;
}

/**
 * After a label or an import is stored: when the org contributes in that mode, a message that
 * contributes it once it has settled, handed to `later` (never on the request's path, and a
 * failing send never fails the request). The Cron sweep is the backstop.
 */
export function nudge(
  env: Env,
  later: (work: Promise<unknown>) => void,
  message: NetworkMessage,
): void {
  later(sendNetworkMessages(env, [message], settleSeconds(env)));
}
