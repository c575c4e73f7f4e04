import { describe, expect, it } from "vitest";
import { call, newOrg } from "./support/api";
import { ownerSql } from "./support/db";
import { errorBody } from "./support/errors";
import { assessOnce } from "./support/routes";

// GET /v1/assessments/summary (docs/assess.md, "Summary"). The history is made of one assessment
// through POST /v1/assess, copied by the database owner at chosen instants with chosen decisions
// and latencies (a test cannot make the clock or the model answer them), so every expected count
// and percentile below is worked out by hand.

type Decision = "approve" | "review" | "deny";

interface Made {
  at: string;
  decision: Decision;
  latency: number;
  livemode?: boolean;
}

/**
 * Copies an assessment of the org once per entry: a new id and content hash, the entry's
 * instant, decision, latency and mode, everything else as the original.
 */
async function seed(template: string, made: Made[]) {
  const rows = made.map((m) => ({
    created_at: m.at,
    decision: m.decision,
    latency_ms: m.latency,
    livemode: m.livemode ?? true,
  }));
  await ownerSql`insert into assessments
    select (jsonb_populate_record(null::assessments, to_jsonb(a) || r.value || jsonb_build_object(
      'id', gen_random_uuid(),
      'content_hash', 'sha256:' || md5(gen_random_uuid()::text),
      'idempotency_key', null))).*
    from assessments a, jsonb_array_elements(${JSON.stringify(rows)}::jsonb) r
    where a.id = ${template}`;
}

/** An org, a live key reading assessments, and one assessment to copy. */
async function orgWithTemplate() {
  const org = await newOrg();
  const { key } = await org.key(["assess:read", "assess:write"]);
  const { assessmentId } = await assessOnce(org, key);
  return { org, key, template: assessmentId };
}

function summary(credential: { key?: string; token?: string }, query = "") {
  return call(`/v1/assessments/summary?${query}`, credential);
}

const empty = (date: string) => ({
  date,
  approve: 0,
  review: 0,
  deny: 0,
  total: 0,
  latency_ms: { p50: null, p99: null },
});

const at = (date: string, time = "12:00:00.000") => `${date}T${time}Z`;

/**
 * Three days of June 2026, the middle one empty:
 *
 *   day         decisions (latency ms)                                  p50   p99
 *   2026-06-01  approve 10, approve 20, review 30, deny 40, approve 1000  30    961.6  (40 + 0.96·960)
 *   2026-06-02  (none)                                                   null  null
 *   2026-06-03  approve 1, deny 2                                        1.5   2      (1.99, to 0.1 ms)
 *   window      the seven: 1 2 10 20 30 40 1000                          20    942.4  (40 + 0.94·960)
 */
const JUNE: Made[] = [
  { at: at("2026-06-01", "00:00:00.000"), decision: "approve", latency: 10 },
  { at: at("2026-06-01"), decision: "approve", latency: 20 },
  { at: at("2026-06-01"), decision: "review", latency: 30 },
  { at: at("2026-06-01"), decision: "deny", latency: 40 },
  { at: at("2026-06-01", "23:59:59.999"), decision: "approve", latency: 1000 },
  { at: at("2026-06-03"), decision: "approve", latency: 1 },
  { at: at("2026-06-03"), decision: "deny", latency: 2 },
];

const JUNE_DAYS = [
  {
    date: "2026-06-01",
    approve: 3,
    review: 1,
    deny: 1,
    total: 5,
    latency_ms: { p50: 30, p99: 961.6 },
  },
  empty("2026-06-02"),
  {
    date: "2026-06-03",
    approve: 1,
    review: 0,
    deny: 1,
    total: 2,
    latency_ms: { p50: 1.5, p99: 2 },
  },
];

const JUNE_TOTALS = {
  approve: 4,
  review: 1,
  deny: 2,
  total: 7,
  approval_rate: 0.5714, // 4 / 7
  latency_ms: { p50: 20, p99: 942.4 },
};

describe("GET /v1/assessments/summary", () => {
  it("counts every day by decision, empty days included, with exact percentiles", async () => {
    const { key, template } = await orgWithTemplate();
    await seed(template, JUNE);
    const res = await summary({ key }, "from=2026-06-01&to=2026-06-04");
    expect(res.status).toBe(200);
    expect(res.json).toEqual({
      object: "assessment_summary",
      livemode: true,
      from: "2026-06-01T00:00:00.000Z",
      to: "2026-06-04T00:00:00.000Z",
      tz: "UTC",
      days: JUNE_DAYS,
      totals: JUNE_TOTALS,
    });
  });

  it("reads the window as [from, to): instants, offsets and partial days", async () => {
    const { key, template } = await orgWithTemplate();
    await seed(template, [
      { at: at("2026-06-01", "11:59:59.999"), decision: "deny", latency: 5 }, // before from
      { at: at("2026-06-01", "12:00:00.000"), decision: "approve", latency: 6 }, // at from
      { at: at("2026-06-02", "05:59:59.999"), decision: "review", latency: 7 }, // last in
      { at: at("2026-06-02", "06:00:00.000"), decision: "deny", latency: 8 }, // at to
    ]);
    // 14:00 at +02:00 is 12:00 UTC; 08:00 at +02:00 is 06:00 UTC.
    const res = await summary(
      { key },
      new URLSearchParams({
        from: "2026-06-01T14:00:00+02:00",
        to: "2026-06-02T08:00:00+02:00",
      }).toString(),
    );
    expect(res.status).toBe(200);
    expect(res.json.from).toBe("2026-06-01T12:00:00.000Z");
    expect(res.json.to).toBe("2026-06-02T06:00:00.000Z");
    expect(res.json.days).toEqual([
      {
        date: "2026-06-01",
        approve: 1,
        review: 0,
        deny: 0,
        total: 1,
        latency_ms: { p50: 6, p99: 6 },
      },
      {
        date: "2026-06-02",
        approve: 0,
        review: 1,
        deny: 0,
        total: 1,
        latency_ms: { p50: 7, p99: 7 },
      },
    ]);
    expect(res.json.totals).toEqual({
      approve: 1,
      review: 1,
      deny: 0,
      total: 2,
      approval_rate: 0.5,
      latency_ms: { p50: 6.5, p99: 7 }, // 6 + 0.5·1; 6 + 0.99·1 = 6.99 → 7
    });
  });

  it("answers the last 30 UTC days, today last, by default", async () => {
    const org = await newOrg();
    const { key } = await org.key(["assess:read"]);
    const before = Date.now();
    const res = await summary({ key });
    const after = Date.now();
    expect(res.status).toBe(200);
    const day = 86_400_000;
    const ends = [before, after].map((t) =>
      new Date((Math.floor(t / day) + 1) * day).toISOString(),
    );
    expect(ends).toContain(res.json.to);
    const to = Date.parse(res.json.to);
    expect(res.json.from).toBe(new Date(to - 30 * day).toISOString());
    const dates = Array.from({ length: 30 }, (_, i) =>
      new Date(to - (30 - i) * day).toISOString().slice(0, 10),
    );
    expect(res.json.days).toEqual(dates.map(empty));
    expect(res.json.totals).toEqual({
      approve: 0,
      review: 0,
      deny: 0,
      total: 0,
      approval_rate: null,
      latency_ms: { p50: null, p99: null },
    });
  });

  it("counts an assessment made through the API today, with the latency it answered", async () => {
    const { key, template } = await orgWithTemplate();
    const made = await call(`/v1/assessments/${template}`, { key });
    expect(made.status).toBe(200);
    const { decision } = made.json.outcome;
    const latency = made.json.latency_ms;
    const res = await summary({ key });
    expect(res.status).toBe(200);
    expect(res.json.days.at(-1)).toEqual({
      date: new Date(Date.parse(res.json.to) - 86_400_000).toISOString().slice(0, 10),
      approve: decision === "approve" ? 1 : 0,
      review: decision === "review" ? 1 : 0,
      deny: decision === "deny" ? 1 : 0,
      total: 1,
      latency_ms: { p50: latency, p99: latency },
    });
  });

  it("counts a review as recorded, not as a person resolved it", async () => {
    const org = await newOrg();
    const { key } = await org.key(["assess:read", "assess:write", "review:read", "review:write"]);
    const { assessmentId } = await assessOnce(org, key);
    const reviews = await call("/v1/reviews?order=desc&limit=1", { key });
    const review = reviews.json.data[0];
    expect(review!.assessment_id).toBe(assessmentId);
    const resolved = await call(`/v1/reviews/${review!.id}/resolve`, {
      method: "POST",
      key,
      body: { decision: "approve", note: "checked by hand" },
    });
    expect(resolved.status).toBe(200);
    const res = await summary({ key });
    expect(res.json.totals).toMatchObject({ approve: 0, review: 1, deny: 0, total: 1 });
    expect(res.json.totals.approval_rate).toBe(0);
  });

  it("keeps test and live mode apart", async () => {
    const { org, template } = await orgWithTemplate();
    const { key: testKey } = await org.key(["assess:read"], "test");
    await seed(template, [
      ...JUNE,
      { at: at("2026-06-02"), decision: "deny", latency: 50, livemode: false },
      { at: at("2026-06-02"), decision: "deny", latency: 70, livemode: false },
    ]);
    const window = "from=2026-06-01&to=2026-06-04";
    const test = await summary({ key: testKey }, window);
    expect(test.status).toBe(200);
    expect(test.json.livemode).toBe(false);
    expect(test.json.days).toEqual([
      empty("2026-06-01"),
      {
        date: "2026-06-02",
        approve: 0,
        review: 0,
        deny: 2,
        total: 2,
        latency_ms: { p50: 60, p99: 69.8 },
      },
      empty("2026-06-03"),
    ]);
    expect(test.json.totals).toEqual({
      approve: 0,
      review: 0,
      deny: 2,
      total: 2,
      approval_rate: 0,
      latency_ms: { p50: 60, p99: 69.8 },
    });
    // A session is live, as a live key is: neither sees the test assessments.
    const live = await summary({ token: org.token }, window);
    expect(live.json).toMatchObject({ livemode: true, days: JUNE_DAYS, totals: JUNE_TOTALS });
  });

  it("never counts another org's assessments", async () => {
    const mine = await orgWithTemplate();
    const theirs = await orgWithTemplate();
    await seed(mine.template, JUNE);
    await seed(theirs.template, [
      ...JUNE,
      { at: at("2026-06-02"), decision: "approve", latency: 3 },
    ]);
    const res = await summary({ key: mine.key }, "from=2026-06-01&to=2026-06-04");
    expect(res.json.days).toEqual(JUNE_DAYS);
    expect(res.json.totals).toEqual(JUNE_TOTALS);
    // And theirs reads theirs: the one approve of the second day.
    const other = await summary({ token: theirs.org.token }, "from=2026-06-02&to=2026-06-03");
    expect(other.json.totals.total).toBe(1);
  });

  it("reads a window of 366 days, and no longer", async () => {
    const org = await newOrg();
    const { key } = await org.key(["assess:read"]);
    const year = await summary({ key }, "from=2024-01-01&to=2025-01-01"); // a leap year
    expect(year.status).toBe(200);
    expect(year.json.days).toHaveLength(366);
    expect(year.json.days[0]!.date).toBe("2024-01-01");
    expect(year.json.days.at(-1)!.date).toBe("2024-12-31");
    const longer = await summary({ key }, "from=2024-01-01&to=2025-01-01T00:00:00.001Z");
    expect(longer.status).toBe(400);
    expect(longer.json).toEqual(
      errorBody("invalid_request", [
        { path: "from", message: "the window is at most 366 days", code: "custom" },
      ]),
    );
  });

  it("counts the days of the time zone asked for", async () => {
    const { key, template } = await orgWithTemplate();
    await seed(template, [
      { at: at("2026-05-31", "21:59:59.999"), decision: "deny", latency: 1 }, // 23:59 on 05-31
      { at: at("2026-06-01", "21:30:00.000"), decision: "approve", latency: 2 }, // 23:30 on 06-01
      { at: at("2026-06-01", "22:30:00.000"), decision: "review", latency: 3 }, // 00:30 on 06-02
      { at: at("2026-06-02", "21:59:59.999"), decision: "deny", latency: 4 }, // 23:59 on 06-02
      { at: at("2026-06-02", "22:00:00.000"), decision: "deny", latency: 5 }, // 00:00 on 06-03
    ]);
    const res = await summary({ key }, "from=2026-06-01&to=2026-06-03&tz=Europe/Paris");
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({
      from: "2026-05-31T22:00:00.000Z", // midnight in Paris, summer time (+02:00)
      to: "2026-06-02T22:00:00.000Z",
      tz: "Europe/Paris",
    });
    expect(res.json.days).toEqual([
      {
        date: "2026-06-01",
        approve: 1,
        review: 0,
        deny: 0,
        total: 1,
        latency_ms: { p50: 2, p99: 2 },
      },
      {
        date: "2026-06-02",
        approve: 0,
        review: 1,
        deny: 1,
        total: 2,
        latency_ms: { p50: 3.5, p99: 4 },
      },
    ]);
  });

  it("keeps a day that daylight saving shortens whole", async () => {
    const { key, template } = await orgWithTemplate();
    // 2026-03-29 in Paris has 23 hours: from 23:00 UTC the day before to 22:00 UTC.
    await seed(template, [
      { at: at("2026-03-28", "23:00:00.000"), decision: "approve", latency: 1 },
      { at: at("2026-03-29", "21:59:59.999"), decision: "approve", latency: 1 },
      { at: at("2026-03-29", "22:00:00.000"), decision: "deny", latency: 1 }, // 03-30
    ]);
    const res = await summary({ key }, "from=2026-03-29&to=2026-03-30&tz=Europe/Paris");
    expect(res.status).toBe(200);
    expect(res.json.from).toBe("2026-03-28T23:00:00.000Z");
    expect(res.json.to).toBe("2026-03-29T22:00:00.000Z");
    expect(res.json.days).toEqual([
      {
        date: "2026-03-29",
        approve: 2,
        review: 0,
        deny: 0,
        total: 2,
        latency_ms: { p50: 1, p99: 1 },
      },
    ]);
  });

  it("starts a day whose midnight daylight saving skips at its first instant", async () => {
    const { key, template } = await orgWithTemplate();
    // Cairo's clocks go from 00:00 to 01:00 on 2026-04-24 (22:00 UTC the day before).
    await seed(template, [
      { at: at("2026-04-23", "21:59:59.999"), decision: "deny", latency: 1 }, // 23:59 on 04-23
      { at: at("2026-04-23", "22:00:00.000"), decision: "approve", latency: 1 }, // 01:00 on 04-24
    ]);
    const res = await summary({ key }, "from=2026-04-24&to=2026-04-25&tz=Africa/Cairo");
    expect(res.status).toBe(200);
    expect(res.json.from).toBe("2026-04-23T22:00:00.000Z");
    expect(res.json.to).toBe("2026-04-24T21:00:00.000Z"); // midnight in summer time (+03:00)
    expect(res.json.days).toEqual([
      {
        date: "2026-04-24",
        approve: 1,
        review: 0,
        deny: 0,
        total: 1,
        latency_ms: { p50: 1, p99: 1 },
      },
    ]);
  });

  it("counts 366 local days, an hour gained at the clock's change included", async () => {
    const org = await newOrg();
    const { key } = await org.key(["assess:read"]);
    // From summer time to winter time: 366 days of the wall clock are 366 days and an hour.
    const res = await summary({ key }, "from=2025-10-25&to=2026-10-26&tz=Europe/Paris");
    expect(res.status).toBe(200);
    expect(Date.parse(res.json.to) - Date.parse(res.json.from)).toBe(366 * 86_400_000 + 3_600_000);
    expect(res.json.days).toHaveLength(366);
    const longer = await summary({ key }, "from=2025-10-25&to=2026-10-27&tz=Europe/Paris");
    expect(longer.status).toBe(400);
  });

  it("ends the default window at the next midnight of the time zone", async () => {
    const org = await newOrg();
    const { key } = await org.key(["assess:read"]);
    const res = await summary({ key }, "tz=Pacific/Kiritimati"); // UTC+14, no daylight saving
    expect(res.status).toBe(200);
    expect(res.json.tz).toBe("Pacific/Kiritimati");
    const day = 86_400_000;
    const toWall = Date.parse(res.json.to) + 14 * 3_600_000;
    expect(toWall % day).toBe(0);
    expect(toWall - (Date.now() + 14 * 3_600_000)).toBeLessThanOrEqual(day);
    expect(Date.parse(res.json.to) - Date.parse(res.json.from)).toBe(30 * day);
    expect(res.json.days.at(-1)!.date).toBe(new Date(toWall - day).toISOString().slice(0, 10));
    expect(res.json.days).toHaveLength(30);
  });

  it.each([
    ["from equal to to", "from=2026-06-01&to=2026-06-01", "must be before to"],
    ["from after to", "from=2026-06-02&to=2026-06-01", "must be before to"],
    ["a lone from more than 366 days ago", "from=2020-01-01", "the window is at most 366 days"],
  ])("answers 400 to %s", async (_, query, message) => {
    const org = await newOrg();
    const { key } = await org.key(["assess:read"]);
    const res = await summary({ key }, query);
    expect(res.status).toBe(400);
    expect(res.json).toEqual(
      errorBody("invalid_request", [{ path: "from", message, code: "custom" }]),
    );
  });

  it("takes the 30 days before a lone to", async () => {
    const org = await newOrg();
    const { key } = await org.key(["assess:read"]);
    const res = await summary({ key }, "to=2020-01-01T00:00:00Z");
    expect(res.status).toBe(200);
    expect(res.json.from).toBe("2019-12-02T00:00:00.000Z");
    expect(res.json.days).toHaveLength(30);
    expect(res.json.days[0]!.date).toBe("2019-12-02");
  });

  it("reads a window of the first days of year 1", async () => {
    const org = await newOrg();
    const { key } = await org.key(["assess:read"]);
    const res = await summary({ key }, "from=0001-01-01&to=0001-01-10");
    expect(res.status, res.text).toBe(200);
    expect(res.json.from).toBe("0001-01-01T00:00:00.000Z");
    expect(res.json.days.map((d: { date: string }) => d.date)).toEqual(
      Array.from({ length: 9 }, (_, i) => `0001-01-0${i + 1}`),
    );
  });

  // Bounds each within years 1 to 9999 can still make a window beyond them: a default from 30
  // days before an early to, or a date's midnight in a zone ahead of UTC. Postgres cannot read
  // such an instant, so it is the caller's 400, naming the parameter that set it.
  it.each([
    ["to=0001-01-10", "to", "leaves the default from (30 days before it) before year 1 in UTC"],
    [
      "to=0001-01-01T00:00:00Z",
      "to",
      "leaves the default from (30 days before it) before year 1 in UTC",
    ],
    [
      "from=0001-01-01&to=0001-01-10&tz=Asia/Tokyo",
      "from",
      "must not be before year 1 in Asia/Tokyo",
    ],
    [
      "from=0001-01-01T00:00:00Z&to=0001-01-10T00:00:00Z&tz=America/New_York",
      "from",
      "must not be before year 1 in America/New_York",
    ],
    [
      "from=9999-12-01T00:00:00Z&to=9999-12-31T23:59:59.999Z&tz=Asia/Tokyo",
      "to",
      "must not be after year 9999 in Asia/Tokyo",
    ],
  ])("answers 400 to a window beyond years 1 to 9999: %s", async (query, path, message) => {
    const org = await newOrg();
    const { key } = await org.key(["assess:read"]);
    const res = await summary({ key }, query);
    expect(res.status, res.text).toBe(400);
    expect(res.error).toEqual(errorBody("invalid_request", [{ path, message, code: "custom" }]));
  });

  it.each([
    ["from", "2026-13-45"],
    ["from", "2026-02-30"],
    ["from", "yesterday"],
    ["from", "2026-06-01T00:00:00"], // an instant needs its offset
    ["to", "0000-01-01"],
    ["to", "10000-01-01"],
    ["to", ""],
    ["tz", "Mars/Olympus_Mons"],
    ["tz", "+05:00"], // an offset: Postgres would read its sign backwards
    ["tz", ""],
  ])("answers 400 to %s=%s", async (name, value) => {
    const org = await newOrg();
    const { key } = await org.key(["assess:read"]);
    const res = await summary({ key }, new URLSearchParams({ [name]: value }).toString());
    expect(res.status).toBe(400);
    expect(res.error.error).toBe("invalid_request");
    expect(res.error.details.map((d: { path: string }) => d.path)).toEqual([name]);
  });
});
