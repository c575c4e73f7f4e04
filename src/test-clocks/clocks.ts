import type { z } from "@hono/zod-openapi";
import { and, eq, lte } from "drizzle-orm";
import type { Tenant } from "../auth/tenant";
import type { Database } from "../db/client";
import { getById, listById, mapPage, type Page } from "../db/pagination";
import { testClocks } from "../db/schema";
import { ApiError, orNotFound } from "../errors";
import { commit } from "../ledger/commit";
import { newId } from "../lib/ids";
import {
  type AdvanceTestClock,
  type CreateTestClock,
  clockInstant,
  type TestClock,
} from "../schemas/test-clocks";

// Test clocks (docs/history.md, "Test clocks"): a frozen instant of test mode that an
// assessment or a feedback label can be made at. Every row is test mode (the table has no
// `livemode`): the routes are `testOnly`, and a field naming a clock refuses live mode.

type ClockRow = typeof testClocks.$inferSelect;
type Clock = z.infer<typeof TestClock>;

export function toTestClock(row: Omit<ClockRow, "orgId">): Clock {
  return {
    id: row.id,
    object: "test_clock",
    created: row.createdAt.toISOString(),
    frozen_time: row.frozenTime.toISOString(),
    livemode: false,
    name: row.name,
    status: "ready",
  };
}

/** Creates a clock at `frozen_time` and records `test_clock.created` with it. */
export async function createTestClock(
  tenant: Tenant,
  body: z.infer<typeof CreateTestClock>,
): Promise<Clock> {
  const now = new Date();
  const row = {
    id: newId(now.getTime()),
    name: body.name ?? null,
    frozenTime: clockInstant(body.frozen_time),
    createdAt: now,
  };
  const { results } = await commit(
    tenant,
    {
      type: "test_clock.created",
      subject: { type: "test_clock", id: row.id },
      payload: toTestClock(row),
    },
    (db) => [db.insert(testClocks).values(row).returning()],
  );
  const stored = results[0][0];
  if (!stored) throw new ApiError("internal_error");
  return toTestClock(stored);
}

/** One clock of the org, or 404. */
export async function getTestClock(tenant: Tenant, id: string): Promise<Clock> {
  return toTestClock(await getById(tenant, testClocks, id));
}

/** A page of the org's clocks, newest first. */
export async function listTestClocks(
  tenant: Tenant,
  query: { limit: number; cursor?: string | undefined },
): Promise<Page<Clock>> {
  return mapPage(await listById(tenant, testClocks, query), toTestClock);
}

function backwards(current: Date): ApiError {
  return new ApiError("invalid_request", [
    {
      path: "frozen_time",
      message: `must not be earlier than the clock's current time (${current.toISOString()}): a test clock only moves forward`,
    },
  ]);
}

/**
 * Moves a clock forward to `frozen_time` and records `test_clock.advanced` with its new state;
 * the same time is a no-op (no entry), an earlier one a 400. The check is made before the
 * commit and again by the update itself, so of two racing advances the one that would move the
 * clock back changes nothing and is answered as if it had come second.
 */
export async function advanceTestClock(
  tenant: Tenant,
  id: string,
  body: z.infer<typeof AdvanceTestClock>,
): Promise<Clock> {
  const current = await getById(tenant, testClocks, id);
  const to = clockInstant(body.frozen_time);
  if (to.getTime() < current.frozenTime.getTime()) throw backwards(current.frozenTime);
  if (to.getTime() === current.frozenTime.getTime()) return toTestClock(current);
  const advanced = { ...current, frozenTime: to };
  const { results } = await commit(
    tenant,
    {
      type: "test_clock.advanced",
      subject: { type: "test_clock", id },
      payload: { ...toTestClock(advanced), previous_frozen_time: current.frozenTime.toISOString() },
      // A retry of the same advance records it once.
      once: [`test_clock.advanced:${id}:${to.getTime()}`],
    },
    (db) => [
      db
        .update(testClocks)
        .set({ frozenTime: to })
        .where(and(eq(testClocks.id, id), lte(testClocks.frozenTime, to)))
        .returning(),
    ],
  );
  const moved = results[0][0];
  if (moved) return toTestClock(moved);
  // Deleted, or moved past `to`, between the read and the update.
  const now = await getById(tenant, testClocks, id);
  if (now.frozenTime.getTime() > to.getTime()) throw backwards(now.frozenTime);
  return toTestClock(now);
}

/**
 * Deletes a clock and records `test_clock.deleted`, once per clock: of racing deletes one
 * records it and the others find none (404). What was made under the clock stays, dated as it
 * was.
 */
export async function deleteTestClock(tenant: Tenant, id: string): Promise<void> {
  const existing = await getById(tenant, testClocks, id);
  const { results } = await commit(
    tenant,
    {
      type: "test_clock.deleted",
      subject: { type: "test_clock", id },
      payload: toTestClock(existing),
      once: [`test_clock.deleted:${id}`],
    },
    (db) => [db.delete(testClocks).where(eq(testClocks.id, id)).returning({ id: testClocks.id })],
  );
  orNotFound(results[0][0]);
}

/**
 * The statement that reads a clock's time, for a batch of a route that takes `test_clock`
 * (feedback; the assess path reads it in its context): no round trip of its own.
 */
export function clockTimeQuery(db: Database, id: string) {
  return db
    .select({ frozenTime: testClocks.frozenTime })
    .from(testClocks)
    .where(eq(testClocks.id, id));
}
