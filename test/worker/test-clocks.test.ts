import { SELF } from "cloudflare:test";
import { createClient } from "@agent-risk/client";
import { describe, expect, it } from "vitest";
import { BASE, call, newOrg, type TestOrg } from "./support/api";
import type { Json } from "./support/assess";
import { ownerSql, paymentLabels } from "./support/db";
import { errorBody } from "./support/errors";
import { assessOnce } from "./support/routes";

// docs/history.md, "Test clocks": test mode only, forward only, audited; a feedback label sent
// under a clock is received, and counts from, the clock's time.

const LIVE_REFUSAL = errorBody("test_mode_only", [
  {
    path: "",
    message: "test clocks exist only in test mode: use a test key, or a session with x-mode: test",
  },
]);

async function testOrg() {
  const org = await newOrg();
  const { id: keyId, key } = await org.key(undefined, "test");
  return { org, key, keyId };
}

function createClock(key: string, body: Json) {
  return call("/v1/test-clocks", { method: "POST", key, raw: true, body });
}

function advance(key: string, id: string, body: Json) {
  return call(`/v1/test-clocks/${id}/advance`, { method: "POST", key, raw: true, body });
}

async function clockAt(key: string, frozen: string | number, name?: string) {
  const res = await createClock(key, { frozen_time: frozen, ...(name ? { name } : {}) });
  if (res.status !== 201) throw new Error(`clock creation failed: ${res.status} ${res.text}`);
  return res.json;
}

async function clockEntries(org: TestOrg) {
  return ownerSql`select type, subject_type, subject_id from audit_entries
    where org_id = ${org.id} and type like 'test_clock.%' order by sequence`;
}

function label(key: string, assessmentId: string, body: Json) {
  return call(`/v1/assessments/${assessmentId}/feedback`, {
    method: "POST",
    key,
    raw: true,
    body,
  });
}

/** A whole second a day ahead: a clock time after any assessment made now. */
function tomorrow(): string {
  return new Date(Math.floor(Date.now() / 1000) * 1000 + 86_400_000).toISOString();
}

describe("test clocks", () => {
  it("creates a clock at a time, as ISO 8601 or unix seconds, and reads it back", async () => {
    const { key } = await testOrg();
    const res = await createClock(key, { frozen_time: "2018-07-25T02:00:00+02:00", name: "july" });
    expect(res.status).toBe(201);
    expect(res.json).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      object: "test_clock",
      created: expect.any(String),
      frozen_time: "2018-07-25T00:00:00.000Z",
      livemode: false,
      name: "july",
      status: "ready",
    });
    expect(Math.abs(Date.parse(res.json.created) - Date.now())).toBeLessThan(60_000);
    const read = await call(`/v1/test-clocks/${res.json.id}`, { key });
    expect(read.status).toBe(200);
    expect(read.json).toEqual(res.json);

    const seconds = await createClock(key, { frozen_time: 1532476800 });
    expect(seconds.status).toBe(201);
    expect(seconds.json).toMatchObject({ frozen_time: "2018-07-25T00:00:00.000Z", name: null });
  });

  it("refuses a body without a valid frozen_time, naming it", async () => {
    const { key } = await testOrg();
    for (const body of [
      {},
      { frozen_time: "yesterday" },
      { frozen_time: 1.5 },
      { frozen_time: -1 },
      { frozen_time: "2018-07-25T00:00:00" },
    ]) {
      const res = await createClock(key, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.error.error).toBe("invalid_request");
      expect(res.error.details.map((d: Json) => d.path)).toContain("frozen_time");
    }
    const unknown = await createClock(key, { frozen_time: 0, speed: 2 });
    expect(unknown.status).toBe(400);
    expect(unknown.error.error).toBe("invalid_request");
  });

  it("moves forward only: later advances, the same time is a no-op, earlier is a 400", async () => {
    const { org, key } = await testOrg();
    const clock = await clockAt(key, "2018-07-25T00:00:00Z");
    const later = await advance(key, clock.id, { frozen_time: "2018-08-01T00:00:00Z" });
    expect(later.status).toBe(200);
    expect(later.json).toEqual({ ...clock, frozen_time: "2018-08-01T00:00:00.000Z" });

    const same = await advance(key, clock.id, { frozen_time: 1533081600 });
    expect(same.status).toBe(200);
    expect(same.json).toEqual(later.json);

    const back = await advance(key, clock.id, { frozen_time: "2018-07-31T23:59:59.999Z" });
    expect(back.status).toBe(400);
    expect(back.error).toEqual(
      errorBody("invalid_request", [
        {
          path: "frozen_time",
          message:
            "must not be earlier than the clock's current time (2018-08-01T00:00:00.000Z): a test clock only moves forward",
        },
      ]),
    );
    expect((await call(`/v1/test-clocks/${clock.id}`, { key })).json).toEqual(later.json);
    // One entry for the creation and one for the one move; the no-op and the refusal add none.
    expect(await clockEntries(org)).toEqual([
      { type: "test_clock.created", subject_type: "test_clock", subject_id: clock.id },
      { type: "test_clock.advanced", subject_type: "test_clock", subject_id: clock.id },
    ]);
  });

  it("deletes a clock, audited, after which it is a 404 everywhere", async () => {
    const { org, key } = await testOrg();
    const clock = await clockAt(key, "2018-07-25T00:00:00Z");
    const res = await call(`/v1/test-clocks/${clock.id}`, { method: "DELETE", key });
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ id: clock.id, object: "test_clock", deleted: true });
    const notFound = errorBody("not_found");
    const read = await call(`/v1/test-clocks/${clock.id}`, { key });
    expect([read.status, read.error]).toEqual([404, notFound]);
    const again = await call(`/v1/test-clocks/${clock.id}`, { method: "DELETE", key });
    expect([again.status, again.error]).toEqual([404, notFound]);
    const moved = await advance(key, clock.id, { frozen_time: "2019-01-01T00:00:00Z" });
    expect([moved.status, moved.error]).toEqual([404, notFound]);
    expect((await call("/v1/test-clocks", { key })).json.data).toEqual([]);
    expect(await clockEntries(org)).toEqual([
      { type: "test_clock.created", subject_type: "test_clock", subject_id: clock.id },
      { type: "test_clock.deleted", subject_type: "test_clock", subject_id: clock.id },
    ]);
  });

  it("ends at the latest of racing advances, and records racing deletes once", async () => {
    const { org, key } = await testOrg();
    const clock = await clockAt(key, "2018-07-01T00:00:00Z");
    const [near, far] = await Promise.all([
      advance(key, clock.id, { frozen_time: "2018-07-02T00:00:00Z" }),
      advance(key, clock.id, { frozen_time: "2018-07-03T00:00:00Z" }),
    ]);
    expect(far.status).toBe(200);
    // The nearer one either went first, or found the clock already past it.
    expect([200, 400]).toContain(near.status);
    const read = await call(`/v1/test-clocks/${clock.id}`, { key });
    expect(read.json.frozen_time).toBe("2018-07-03T00:00:00.000Z");

    const deletes = await Promise.all(
      [1, 2, 3].map(() => call(`/v1/test-clocks/${clock.id}`, { method: "DELETE", key })),
    );
    expect(deletes.map((d) => d.status).sort()).toEqual([200, 404, 404]);
    const entries = (await clockEntries(org)).map((e) => e.type);
    expect(entries.filter((t) => t === "test_clock.deleted")).toHaveLength(1);
  });

  it("lists the org's clocks newest first, a page at a time", async () => {
    const { key } = await testOrg();
    const made = [];
    for (const day of ["01", "02", "03"]) made.push(await clockAt(key, `2018-07-${day}T00:00:00Z`));
    const first = await call("/v1/test-clocks?limit=2", { key });
    expect(first.status).toBe(200);
    expect(first.json).toEqual({
      object: "list",
      data: [made[2], made[1]],
      has_more: true,
      next_cursor: expect.any(String),
    });
    const cursor = encodeURIComponent(first.json.next_cursor as string);
    const second = await call(`/v1/test-clocks?limit=2&cursor=${cursor}`, { key });
    expect(second.json).toEqual({
      object: "list",
      data: [made[0]],
      has_more: false,
      next_cursor: null,
    });
    const bad = await call("/v1/test-clocks?cursor=nonsense", { key });
    expect(bad.status).toBe(400);
    expect(bad.error.error).toBe("invalid_cursor");
  });

  it("keeps each org's clocks its own: another org's clock is a 404, and never listed", async () => {
    const { key } = await testOrg();
    const clock = await clockAt(key, "2018-07-25T00:00:00Z");
    const { key: intruder } = await testOrg();
    const notFound = errorBody("not_found");
    const read = await call(`/v1/test-clocks/${clock.id}`, { key: intruder });
    expect([read.status, read.error]).toEqual([404, notFound]);
    const moved = await advance(intruder, clock.id, { frozen_time: "2019-01-01T00:00:00Z" });
    expect([moved.status, moved.error]).toEqual([404, notFound]);
    const removed = await call(`/v1/test-clocks/${clock.id}`, { method: "DELETE", key: intruder });
    expect([removed.status, removed.error]).toEqual([404, notFound]);
    expect((await call("/v1/test-clocks", { key: intruder })).json.data).toEqual([]);
    // Untouched for its owner.
    expect((await call(`/v1/test-clocks/${clock.id}`, { key })).json).toEqual(clock);
  });

  it("refuses live mode with 400 test_mode_only: a live key, and a session without x-mode: test", async () => {
    const { org, key } = await testOrg();
    const clock = await clockAt(key, "2018-07-25T00:00:00Z");
    const { key: live } = await org.key(undefined, "live");
    const refused = await createClock(live, { frozen_time: "2018-07-25T00:00:00Z" });
    expect([refused.status, refused.error]).toEqual([400, LIVE_REFUSAL]);
    const read = await call(`/v1/test-clocks/${clock.id}`, { key: live });
    expect([read.status, read.error]).toEqual([400, LIVE_REFUSAL]);
    const session = await call("/v1/test-clocks", { token: org.token });
    expect([session.status, session.error]).toEqual([400, LIVE_REFUSAL]);
    const testSession = await call("/v1/test-clocks", {
      token: org.token,
      headers: { "x-mode": "test" },
    });
    expect(testSession.status).toBe(200);
    expect(testSession.json.data).toEqual([clock]);
    // Nothing was created in live mode.
    expect(await clockEntries(org)).toHaveLength(1);
  });
});

describe("test clocks through @agent-risk/client", () => {
  it("creates, advances and deletes a clock with the typed client, which throws the 400s", async () => {
    const { key } = await testOrg();
    const risk = createClient({ baseUrl: BASE, apiKey: key, fetch: (r) => SELF.fetch(r) });
    const { data: clock } = await risk.POST("/v1/test-clocks", {
      body: { frozen_time: 1532476800, name: "client" },
    });
    expect(clock).toMatchObject({ object: "test_clock", frozen_time: "2018-07-25T00:00:00.000Z" });
    const path = { params: { path: { id: clock.id } } };
    const { data: moved } = await risk.POST("/v1/test-clocks/{id}/advance", {
      ...path,
      body: { frozen_time: "2018-08-01T00:00:00Z" },
    });
    expect(moved.frozen_time).toBe("2018-08-01T00:00:00.000Z");
    const back = await risk
      .POST("/v1/test-clocks/{id}/advance", { ...path, body: { frozen_time: 0 } })
      .catch((e) => e);
    expect(back).toMatchObject({ status: 400, error: "invalid_request" });
    const { data: gone } = await risk.DELETE("/v1/test-clocks/{id}", path);
    expect(gone).toEqual({ id: clock.id, object: "test_clock", deleted: true });
    const { data: list } = await risk.GET("/v1/test-clocks", {});
    expect(list.data).toEqual([]);
  });
});

describe("feedback under a test clock", () => {
  it("is received at the clock's time, and its payment label counts from then", async () => {
    const { org, key, keyId } = await testOrg();
    const { assessmentId } = await assessOnce(org, key);
    const at = tomorrow();
    const clock = await clockAt(key, at);
    const res = await label(key, assessmentId, { label: "fraud", test_clock: clock.id });
    expect(res.status).toBe(201);
    expect(res.json).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      object: "assessment_feedback",
      assessment_id: assessmentId,
      livemode: false,
      label: "fraud",
      occurred_at: at,
      source: null,
      note: null,
      created: at,
      created_by: { type: "api_key", id: keyId },
    });
    expect(await paymentLabels(org.id)).toEqual([
      {
        feedback_id: res.json.id,
        payment_id: assessmentId,
        livemode: false,
        label: "fraud",
        source: "feedback",
        known_at: at,
      },
    ]);
  });

  it("without a clock, the payment label counts from the time the label was received", async () => {
    const { org, key } = await testOrg();
    const { assessmentId } = await assessOnce(org, key);
    const res = await label(key, assessmentId, { label: "chargeback" });
    expect(res.status).toBe(201);
    const [row] = await paymentLabels(org.id);
    expect(row?.known_at).toBe(res.json.created);
    expect(Math.abs(Date.parse(res.json.created) - Date.now())).toBeLessThan(60_000);
  });

  it("lists labels in the order they were received, the clock's time for a clocked one", async () => {
    const { org, key } = await testOrg();
    const { assessmentId } = await assessOnce(org, key);
    const clock = await clockAt(key, tomorrow());
    const clocked = await label(key, assessmentId, { label: "fraud", test_clock: clock.id });
    const now = await label(key, assessmentId, { label: "dispute" });
    const list = await call(`/v1/assessments/${assessmentId}/feedback`, { key });
    expect(list.json.data.map((f: Json) => f.id)).toEqual([now.json.id, clocked.json.id]);
    // The clocked fraud happened later (its occurred_at is the clock's): it is the effective label.
    expect(list.json).toMatchObject({ effective_label: "fraud", pending: false });
  });

  it("takes an occurred_at up to the clock's time, and refuses a later one", async () => {
    const { org, key } = await testOrg();
    const { assessmentId } = await assessOnce(org, key);
    const at = tomorrow();
    const clock = await clockAt(key, at);
    const earlier = new Date(Date.parse(at) - 3_600_000).toISOString();
    const ok = await label(key, assessmentId, {
      label: "chargeback",
      occurred_at: earlier,
      test_clock: clock.id,
    });
    expect(ok.status).toBe(201);
    expect(ok.json).toMatchObject({ occurred_at: earlier, created: at });
    const late = await label(key, assessmentId, {
      label: "chargeback",
      occurred_at: new Date(Date.parse(at) + 1).toISOString(),
      test_clock: clock.id,
    });
    expect(late.status).toBe(400);
    expect(late.error).toEqual(
      errorBody("invalid_request", [{ path: "occurred_at", message: "must not be in the future" }]),
    );
  });

  it("refuses a clock whose time is before the assessment: a label is not known before its payment", async () => {
    const { org, key } = await testOrg();
    const { assessmentId } = await assessOnce(org, key);
    const clock = await clockAt(key, "2018-07-25T00:00:00Z");
    const res = await label(key, assessmentId, { label: "fraud", test_clock: clock.id });
    expect(res.status).toBe(400);
    expect(res.error.error).toBe("invalid_request");
    expect(res.error.details).toEqual([
      {
        path: "test_clock",
        message: expect.stringMatching(
          /^the clock's time \(2018-07-25T00:00:00\.000Z\) is before the assessment \(.+\): a label is not known before its payment$/,
        ),
      },
    ]);
    expect(await paymentLabels(org.id)).toEqual([]);
  });

  it("answers 400 naming test_clock for an unknown, deleted or another org's clock", async () => {
    const { org, key } = await testOrg();
    const { assessmentId } = await assessOnce(org, key);
    const { key: otherKey } = await testOrg();
    const theirs = await clockAt(otherKey, tomorrow());
    const gone = await clockAt(key, tomorrow());
    await call(`/v1/test-clocks/${gone.id}`, { method: "DELETE", key });
    const noSuch = errorBody("invalid_request", [
      { path: "test_clock", message: "no such test clock" },
    ]);
    for (const id of [theirs.id, gone.id, "0190b7d2-8c5e-7c4a-9d3e-1f2a3b4c5d6e"]) {
      const res = await label(key, assessmentId, { label: "fraud", test_clock: id });
      expect([res.status, res.error]).toEqual([400, noSuch]);
    }
    const malformed = await label(key, assessmentId, { label: "fraud", test_clock: "nope" });
    expect(malformed.status).toBe(400);
    expect(malformed.error.details.map((d: Json) => d.path)).toEqual(["test_clock"]);
    expect(await paymentLabels(org.id)).toEqual([]);
  });

  it("refuses a test_clock in live mode with a 400 naming it, as assess does, writing nothing", async () => {
    const { org, key } = await testOrg();
    const clock = await clockAt(key, tomorrow());
    const { key: live } = await org.key(undefined, "live");
    const { assessmentId } = await assessOnce(org, live);
    const res = await label(live, assessmentId, { label: "fraud", test_clock: clock.id });
    expect([res.status, res.error]).toEqual([
      400,
      errorBody("invalid_request", [
        { path: "test_clock", message: "test clocks are for test keys only" },
      ]),
    ]);
    const [count] = await ownerSql`select count(*)::int as n from audit_entries
      where org_id = ${org.id} and type = 'assessment.feedback_added'`;
    expect(count).toEqual({ n: 0 });
  });
});
