import { z } from "@hono/zod-openapi";
import { RowUuid } from "./agents";
import { DateTime, LATEST_TIME_MS, listOf, plainText } from "./common";

// Test clocks as the API takes and shows them (docs/history.md, "Test clocks"; Stripe's
// convention): test mode only, moved forward only.

/** The latest instant Postgres stores, in unix seconds. */
const LATEST_SECONDS = Math.floor(LATEST_TIME_MS / 1000);

/**
 * An instant as a clock takes it: ISO 8601 with an offset, or (as Stripe takes it) an integer of
 * unix seconds from 0 (1970-01-01) to year 9999. Shown back as ISO 8601 in UTC, to the
 * millisecond. A fresh schema per field (a named one would carry one field's description to
 * the others).
 */
function clockTime(description: string) {
  return z
    .union([
      DateTime,
      z.number().int().min(0).max(LATEST_SECONDS).openapi({ description: "Unix seconds" }),
    ])
    .openapi({
      description: `${description}: ISO 8601 with an offset, or unix seconds`,
      example: "2018-07-25T00:00:00Z",
    });
}

export type ClockTime = z.infer<ReturnType<typeof clockTime>>;

/** The instant a `ClockTime` names. */
export function clockInstant(value: ClockTime): Date {
  return new Date(typeof value === "number" ? value * 1000 : Date.parse(value));
}

/**
 * A request field naming a clock to act at (feedback; the assess path): test mode only (live
 * mode is 400 `invalid_request` naming the field), and a clock of another org or none at all is 400
 * `invalid_request` naming the field ("no such test clock").
 */
export const TestClockRef = RowUuid.openapi({
  description:
    "A test clock's id: the request acts at its frozen time. Test mode only (live: 400 naming `test_clock`)",
  example: "0190b7d2-8c5e-7c4a-9d3e-1f2a3b4c5d6e",
});

export const CreateTestClock = z
  .object({
    frozen_time: clockTime("The clock's time to begin with"),
    name: plainText(300).optional().openapi({ description: "What the clock is for" }),
  })
  .strict()
  .openapi("CreateTestClock");

export const AdvanceTestClock = z
  .object({
    frozen_time: clockTime(
      "The clock's new time, not earlier than its current one (the same is a no-op)",
    ),
  })
  .strict()
  .openapi("AdvanceTestClock");

export const TestClock = z
  .object({
    id: z.string(),
    object: z.literal("test_clock"),
    created: z.string().openapi({ description: "When the clock was created (real time)" }),
    frozen_time: z.string().openapi({
      description: "The clock's time: what an assessment or a label made under it is dated",
    }),
    livemode: z.literal(false).openapi({ description: "Test clocks exist only in test mode" }),
    name: z.string().nullable(),
    status: z.literal("ready").openapi({
      description: "Always `ready`: an advance completes within its request",
    }),
  })
  .openapi("TestClock");

export const TestClockList = listOf(TestClock, "TestClockList");

export const DeletedTestClock = z
  .object({ id: z.string(), object: z.literal("test_clock"), deleted: z.literal(true) })
  .openapi("DeletedTestClock");
