import { z } from "@hono/zod-openapi";

// --- Durations: "30s", "15m", "1h", "7d", or ISO 8601 "PT15M", "P7D", "P2W" ---

export const MIN_WINDOW_SECONDS = 1;
export const MAX_WINDOW_SECONDS = 90 * 86_400;

const UNIT_SECONDS = { s: 1, m: 60, h: 3_600, d: 86_400 } as const;
// Lowercase units only: "1M" would read as a month to some, a minute to others.
const SHORT = /^(\d{1,9})([smhd])$/;
// No years or months: their length varies, and a rate window must be a fixed length.
const ISO = /^P(?:(\d{1,9})W|(?:(\d{1,9})D)?(?:T(?:(\d{1,9})H)?(?:(\d{1,9})M)?(?:(\d{1,9})S)?)?)$/;

/** Seconds of a duration in either form, or null when it is in neither; range unchecked. */
function durationSeconds(text: string): number | null {
  const short = SHORT.exec(text);
  if (short) return Number(short[1]) * UNIT_SECONDS[short[2] as keyof typeof UNIT_SECONDS];
  const iso = ISO.exec(text);
  // "P" and "P1DT" match the pattern but name no (time) component: ISO 8601 forbids both.
  if (!iso || text === "P" || text.endsWith("T")) return null;
  const [weeks, days, hours, minutes, seconds] = iso.slice(1).map((part) => Number(part ?? 0));
  return (
    (weeks ?? 0) * 604_800 +
    (days ?? 0) * 86_400 +
    (hours ?? 0) * 3_600 +
    (minutes ?? 0) * 60 +
    (seconds ?? 0)
  );
}

/** A velocity window in seconds: null unless well formed and between 1 s and 90 d. */
export function parseDuration(text: string): number | null {
  const seconds = durationSeconds(text);
  return seconds !== null && seconds >= MIN_WINDOW_SECONDS && seconds <= MAX_WINDOW_SECONDS
    ? seconds
    : null;
}

export const duration = z
  .string()
  .max(32)
  .superRefine((text, ctx) => {
    const seconds = durationSeconds(text);
    if (seconds === null) {
      ctx.addIssue({
        code: "custom",
        message: "must be a duration such as 30s, 15m, 1h, 7d, or ISO 8601 PT15M, P7D",
      });
    } else if (parseDuration(text) === null) {
      ctx.addIssue({ code: "custom", message: "must be between 1s and 90d" });
    }
  })
  .openapi({ example: "1h", description: "`<n>s|m|h|d` or ISO 8601 (`PT15M`, `P7D`), 1s–90d" });
