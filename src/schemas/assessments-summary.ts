import { z } from "@hono/zod-openapi";
import { canonicalZone, fromWallClock, wallClock } from "../lib/time-zone";
import { DateTime, EARLIEST_TIME_MS, LATEST_TIME_MS } from "./common";

// The per-day summary of assessments (docs/assess.md, "Summary"): what the console's Overview
// charts without paging through the list.

/** The longest window one summary reads: a year of days, leap day included. */
export const MAX_SUMMARY_DAYS = 366;
export const DEFAULT_SUMMARY_DAYS = 30;
const DAY_MS = 86_400_000;

/** A bound of the window: an instant with an offset, or a date (its midnight in `tz`). */
const Bound = z.union([
  z.iso.date().refine((value) => {
    const time = Date.parse(value);
    return time >= EARLIEST_TIME_MS && time <= LATEST_TIME_MS;
  }, "must be between years 1 and 9999"),
  DateTime,
]);

export const SummaryQuery = z
  .object({
    from: Bound.optional().openapi({
      description: `Assessments created at or after; default \`to\` minus ${DEFAULT_SUMMARY_DAYS} days. A date is its midnight in \`tz\``,
      example: "2026-11-01",
    }),
    to: Bound.optional().openapi({
      description:
        "Assessments created before; default the end of today in `tz` (its next midnight). " +
        "A date is its midnight in `tz`",
      example: "2026-11-04",
    }),
    tz: z
      .string()
      .max(64)
      .refine(
        (name) => canonicalZone(name) !== null,
        "must be an IANA time zone, e.g. Europe/Paris",
      )
      .optional()
      .openapi({ description: "The days' time zone (IANA); default UTC", example: "UTC" }),
    agent: z.uuid().toLowerCase().optional().openapi({
      description: "Only the assessments of this agent (its id); an unknown id counts nothing",
    }),
  })
  .superRefine((q, ctx) => {
    const zone = canonicalZone(q.tz ?? "UTC");
    if (zone === null) return;
    const { from, to } = windowOf(q, Date.now(), zone);
    if (Number.isNaN(from) || Number.isNaN(to)) return;
    // Each bound is within years 1 to 9999, but the window may not be: a default from 30 days
    // before an early to, a date's midnight in a zone ahead of UTC, or a first or last local
    // day beyond them. Postgres cannot read such an instant (a 500); it is the caller's to fix.
    if (from < EARLIEST_TIME_MS || wallClock(from, zone) < EARLIEST_TIME_MS) {
      ctx.addIssue(
        q.from === undefined
          ? {
              code: "custom",
              path: ["to"],
              message: `leaves the default from (${DEFAULT_SUMMARY_DAYS} days before it) before year 1 in ${zone}`,
            }
          : { code: "custom", path: ["from"], message: `must not be before year 1 in ${zone}` },
      );
      return;
    }
    if (to > LATEST_TIME_MS || wallClock(to - 1, zone) > LATEST_TIME_MS) {
      ctx.addIssue({
        code: "custom",
        path: ["to"],
        message: `must not be after year 9999 in ${zone}`,
      });
      return;
    }
    if (to <= from) ctx.addIssue({ code: "custom", path: ["from"], message: "must be before to" });
    // Counted on the wall clock, so 366 local days pass whatever daylight saving did meanwhile.
    if (wallClock(to, zone) - wallClock(from, zone) > MAX_SUMMARY_DAYS * DAY_MS) {
      ctx.addIssue({
        code: "custom",
        path: ["from"],
        message: `the window is at most ${MAX_SUMMARY_DAYS} days`,
      });
    }
  });
export type SummaryQuery = z.infer<typeof SummaryQuery>;

/** A bound's instant: a bare date (YYYY-MM-DD) is the first instant of that day in the zone. */
function instant(bound: string, zone: string): number {
  const time = Date.parse(bound);
  return bound.length === 10 ? fromWallClock(time, zone) : time;
}

/** The next midnight in the zone after `now`: the default end, so today is the last day charted. */
function endOfToday(now: number, zone: string): number {
  return fromWallClock((Math.floor(wallClock(now, zone) / DAY_MS) + 1) * DAY_MS, zone);
}

function windowOf(q: { from?: string; to?: string }, now: number, zone: string) {
  const to = q.to === undefined ? endOfToday(now, zone) : instant(q.to, zone);
  const from =
    q.from === undefined
      ? fromWallClock(wallClock(to, zone) - DEFAULT_SUMMARY_DAYS * DAY_MS, zone)
      : instant(q.from, zone);
  return { from, to };
}

/** The window a query names, its defaults filled in: ISO instants in UTC, and the zone's name. */
export function summaryWindow(
  q: SummaryQuery,
  now: number,
): { from: string; to: string; tz: string } {
  const tz = canonicalZone(q.tz ?? "UTC") ?? "UTC";
  const { from, to } = windowOf(q, now, tz);
  return { from: new Date(from).toISOString(), to: new Date(to).toISOString(), tz };
}

const Latency = z
  .object({
    p50: z.number().nullable(),
    p99: z.number().nullable(),
  })
  .openapi("SummaryLatency", {
    description:
      "Percentiles of the stored `latency_ms`, interpolated (`percentile_cont`) and rounded " +
      "to 0.1 ms; null when there is no assessment to measure",
  });

const Counts = {
  approve: z.int(),
  review: z.int(),
  deny: z.int(),
  total: z.int(),
};

const Day = z.object({
  date: z.iso.date().openapi({ description: "The day in `tz` (YYYY-MM-DD)" }),
  ...Counts,
  latency_ms: Latency,
});

export const AssessmentsSummary = z
  .object({
    object: z.literal("assessment_summary"),
    livemode: z.boolean(),
    from: z.string().openapi({ description: "The window's start (inclusive), UTC" }),
    to: z.string().openapi({ description: "The window's end (exclusive), UTC" }),
    tz: z.string().openapi({ description: "The days' time zone (IANA), canonical" }),
    agent: z.string().optional().openapi({
      description: "The agent counted, as asked with `agent`; absent when the query named none",
    }),
    days: z.array(Day).openapi({
      description:
        "Every day (in `tz`) the window touches, oldest first, days without assessments included " +
        "(zeros, null percentiles)",
    }),
    totals: z.object({
      ...Counts,
      approval_rate: z.number().nullable().openapi({
        description: "approve / total, to 4 decimals; null without assessments",
      }),
      latency_ms: Latency,
    }),
  })
  .openapi("AssessmentsSummary", {
    example: {
      object: "assessment_summary",
      livemode: true,
      from: "2026-11-01T00:00:00.000Z",
      to: "2026-11-04T00:00:00.000Z",
      tz: "UTC",
      days: [
        {
          date: "2026-11-01",
          approve: 412,
          review: 31,
          deny: 9,
          total: 452,
          latency_ms: { p50: 38, p99: 142.6 },
        },
        {
          date: "2026-11-02",
          approve: 0,
          review: 0,
          deny: 0,
          total: 0,
          latency_ms: { p50: null, p99: null },
        },
        {
          date: "2026-11-03",
          approve: 388,
          review: 25,
          deny: 14,
          total: 427,
          latency_ms: { p50: 41, p99: 171.3 },
        },
      ],
      totals: {
        approve: 800,
        review: 56,
        deny: 23,
        total: 879,
        approval_rate: 0.9101,
        latency_ms: { p50: 39, p99: 158.2 },
      },
    },
  });
export type AssessmentsSummary = z.infer<typeof AssessmentsSummary>;
