import { logError } from "../lib/log";
/**
 * When a failed delivery is tried again. The default follows Standard Webhooks (Svix): after the
 * first attempt, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h, so eight attempts over about 27
 * hours before a delivery is `failed`. Each delay carries ±10 % jitter so a receiver coming back
 * from an outage is not hit by every delivery at the same instant.
 */
export const DEFAULT_RETRY_DELAYS = [5, 300, 1_800, 7_200, 18_000, 36_000, 36_000];

/** A Queue message can be delayed by at most 12 hours. */
export const MAX_DELAY_SECONDS = 43_200;

/**
 * At most this many retries: the queue's `max_retries` (10, wrangler.toml) must stay above the
 * schedule, with room for consumer faults, or deliveries would dead-letter mid-schedule.
 */
export const MAX_RETRIES = 8;

/**
 * The delays in seconds: `WEBHOOK_RETRY_SCHEDULE` (comma-separated seconds, for tests and
 * operators) when it is well formed, the default otherwise.
 */
export function retryDelays(env: { WEBHOOK_RETRY_SCHEDULE?: string }): number[] {
  const raw = env.WEBHOOK_RETRY_SCHEDULE;
  if (raw === undefined) return DEFAULT_RETRY_DELAYS;
  const parts = raw.split(",").map((part) => part.trim());
  const delays = parts.map(Number);
  const valid =
    parts.length <= MAX_RETRIES &&
    parts.every((part) => /^\d{1,5}$/.test(part)) &&
    delays.every((d) => d <= MAX_DELAY_SECONDS);
  if (!valid) {
    logError("WEBHOOK_RETRY_SCHEDULE ignored: not 1-8 delays");
    return DEFAULT_RETRY_DELAYS;
  }
  return delays;
}

/** How many attempts a delivery gets in all: the first, then one per delay. */
export function maxAttempts(delays: number[]): number {
  return delays.length + 1;
}

/**
 * The delay before the attempt after attempt `attempt` (1-based), jittered; null when that was
 * the last. `random` is injectable so the schedule is testable.
 */
export function delayAfter(
  attempt: number,
  delays: number[],
  random: () => number = Math.random,
): number | null {
  const base = delays[attempt - 1];
  if (base === undefined) return null;
  const jittered = Math.round(base * (0.9 + 0.2 * random()));
  return Math.min(MAX_DELAY_SECONDS, Math.max(0, jittered));
}
