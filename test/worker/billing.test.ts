import { describe, expect, it } from "vitest";
import { call } from "./support/api";
import { assess, assessOk, orgWithKey, payment } from "./support/assess";
import { getBilling, metered, seedBilling } from "./support/billing";
import { appSql } from "./support/db";

// docs/billing.md: plans, the meter, and GET /v1/billing.

describe("GET /v1/billing", () => {
  it("answers a new org's free plan, the current period, no usage and no cap", async () => {
    const { key } = await orgWithKey();
    const res = await getBilling({ key });
    expect(res.status).toBe(200);
    const now = new Date();
    const start = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
    const end = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1));
    expect(res.json).toEqual({
      object: "billing",
      plan: {
        id: "free",
        object: "plan",
        name: "Free",
        currency: "usd",
        amount: 0,
        interval: "month",
        included_assessments: 1000,
        unit_amount: 0,
      },
      current_period: { start: start.toISOString(), end: end.toISOString() },
      usage: { assessments: 0, included_remaining: 1000, billable_overage: 0 },
      projected_charge: { currency: "usd", plan_amount: 0, usage_amount: 0, total: 0 },
      spending_cap: { amount: null, currency: "usd", review_threshold_percent: 80, status: "none" },
      customer: null,
    });
  });

  it("projects the plan fee plus the usage past the included assessments", async () => {
    const { org, key } = await orgWithKey();
    await seedBilling(org.id, "starter", 10_003);
    const res = await getBilling({ key });
    expect(res.json.plan).toMatchObject({ id: "starter", amount: 4900, unit_amount: 2 });
    expect(res.json.usage).toEqual({
      assessments: 10_003,
      included_remaining: 0,
      billable_overage: 3,
    });
    expect(res.json.projected_charge).toEqual({
      currency: "usd",
      plan_amount: 4900,
      usage_amount: 6,
      total: 4906,
    });
  });

  it("is readable with assess:read alone", async () => {
    const { org } = await orgWithKey();
    const { key } = await org.key(["assess:read"]);
    expect((await getBilling({ key })).status).toBe(200);
  });

  it("shows each org its own usage only", async () => {
    const a = await orgWithKey();
    const b = await orgWithKey();
    await assessOk(a.key, { mandate: payment() });
    expect((await getBilling({ key: a.key })).json.usage.assessments).toBe(1);
    expect((await getBilling({ key: b.key })).json.usage.assessments).toBe(0);
  });
});

describe("the meter", () => {
  it("counts each live assessment exactly once", async () => {
    const { org, key } = await orgWithKey();
    for (let i = 0; i < 3; i++) await assessOk(key, { mandate: payment() });
    expect(await metered(org.id)).toBe(3);
    expect((await getBilling({ key })).json.usage.assessments).toBe(3);
  });

  it("never bills a replay of the same content twice", async () => {
    const { org, key } = await orgWithKey();
    const body = { mandate: payment() };
    const first = await assessOk(key, body);
    const again = await assessOk(key, body);
    expect(again).toEqual(first);
    expect(await metered(org.id)).toBe(1);
  });

  it("never bills a replay under the same idempotency key twice", async () => {
    const { org, key } = await orgWithKey();
    const body = { mandate: payment() };
    const headers = { "idempotency-key": `k-${crypto.randomUUID()}` };
    await assessOk(key, body, headers);
    await assessOk(key, body, headers);
    expect(await metered(org.id)).toBe(1);
  });

  it("is exact under concurrent distinct assessments and concurrent duplicates", async () => {
    const { org, key } = await orgWithKey();
    const duplicate = { mandate: payment() };
    const results = await Promise.all([
      ...Array.from({ length: 8 }, () => assess(key, { mandate: payment() })),
      ...Array.from({ length: 6 }, () => assess(key, duplicate)),
    ]);
    for (const res of results) expect(res.status).toBe(200);
    const ids = new Set(results.map((r) => r.json.assessmentId));
    expect(ids.size).toBe(9);
    expect(await metered(org.id)).toBe(9);
  });

  it("does not bill test-mode assessments", async () => {
    const { org } = await orgWithKey();
    const { key: testKey } = await org.key(undefined, "test");
    await assessOk(testKey, { mandate: payment() });
    expect(await metered(org.id)).toBe(0);
  });

  it("never refuses an org without a cap, even past the free plan's included assessments", async () => {
    const { org, key } = await orgWithKey();
    await seedBilling(org.id, "free", 5_000);
    const res = await assess(key, { mandate: payment() });
    expect(res.status).toBe(200);
    expect(await metered(org.id)).toBe(5_001);
    const billing = await getBilling({ key });
    expect(billing.json.projected_charge.total).toBe(0);
  });

  it("meters an owner session's (live) assessment too", async () => {
    const org = await orgWithKey();
    const res = await call("/v1/assess", {
      method: "POST",
      token: org.org.token,
      body: { mandate: payment() },
    });
    expect(res.status).toBe(200);
    expect(await metered(org.org.id)).toBe(1);
  });
});

describe("billing rows under row-level security", () => {
  it("shows each org only its own account, meter and checkouts, and refuses writes for another", async () => {
    const a = await orgWithKey();
    const b = await orgWithKey();
    await seedBilling(a.org.id, "starter", 7);
    await seedBilling(b.org.id, "growth", 9);
    const [, accounts, usage, checkouts] = await appSql.transaction((sql) => [
      sql`select set_config('app.org_id', ${a.org.id}, true)`,
      sql`select org_id, plan from billing_accounts`,
      sql`select org_id, assessments from billing_usage`,
      sql`select org_id from billing_checkouts`,
    ]);
    expect(accounts).toEqual([{ org_id: a.org.id, plan: "starter" }]);
    expect(usage?.map((r) => r.org_id)).toEqual([a.org.id]);
    expect(checkouts).toEqual([]);
    const attempt = appSql.transaction((sql) => [
      sql`select set_config('app.org_id', ${a.org.id}, true)`,
      sql`insert into billing_usage (org_id, period_start, assessments)
          values (${b.org.id}, '2000-01-01', 1)`,
    ]);
    await expect(attempt).rejects.toThrow(/row-level security/);
    const nothing = await appSql.transaction((sql) => [sql`select * from billing_accounts`]);
    expect(nothing[0]).toEqual([]);
  });
});
