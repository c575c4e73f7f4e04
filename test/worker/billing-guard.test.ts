import { describe, expect, it } from "vitest";
import { call, newOrg } from "./support/api";
import { assess, assessOk, orgWithKey, payment } from "./support/assess";
import { billingLedger, getBilling, metered, seedBilling, spendEvents } from "./support/billing";
import { addMember, ownerSql } from "./support/db";
import { errorBody } from "./support/errors";

// docs/billing.md, The spending cap and the spend guard. Starter: 10,000 included, then 2 (cents)
// each. With every included assessment used and a cap of 10, five more are allowed; the fourth
// reaches 80% of the cap (spend.review_required) and the sixth would exceed it (refused).

function setCap(credential: { key?: string; token?: string }, amount: unknown) {
  return call("/v1/billing/spending_cap", {
    method: "POST",
    raw: true,
    body: { amount },
    ...credential,
  });
}

function confirmSpend(token: string, spending_cap: number | null) {
  return call("/v1/billing/spend_confirmations", {
    method: "POST",
    token,
    body: { spending_cap },
  });
}

/** An org on Starter with its included assessments used up and a cap of 10 cents. */
async function cappedOrg() {
  const { org, key } = await orgWithKey();
  await seedBilling(org.id, "starter", 10_000);
  const res = await setCap({ key }, 10);
  expect(res.status).toBe(200);
  return { org, key };
}

async function assessTimes(key: string, n: number) {
  for (let i = 0; i < n; i++) await assessOk(key, { mandate: payment() });
}

describe("setting the spending cap", () => {
  it("sets a cap, shows it, and records the change in the ledger", async () => {
    const { org, key } = await orgWithKey();
    const res = await setCap({ key }, 5000);
    expect(res.status).toBe(200);
    expect(res.json.spending_cap).toEqual({
      amount: 5000,
      currency: "usd",
      review_threshold_percent: 80,
      status: "ok",
    });
    expect((await getBilling({ key })).json.spending_cap.amount).toBe(5000);
    expect(await billingLedger(org.id)).toEqual([
      { type: "billing.spending_cap_set", actor_type: "api_key", actor_id: expect.any(String) },
    ]);
  });

  it("lowers a cap without a confirmation", async () => {
    const { key } = await orgWithKey();
    await setCap({ key }, 5000);
    const res = await setCap({ key }, 100);
    expect(res.status).toBe(200);
    expect(res.json.spending_cap.amount).toBe(100);
  });

  it("refuses to raise a cap: that takes an owner's confirmation", async () => {
    const { key } = await orgWithKey();
    await setCap({ key }, 100);
    const res = await setCap({ key }, 101);
    expect(res.status).toBe(409);
    expect(res.error.error).toBe("spend_confirmation_required");
    expect((await getBilling({ key })).json.spending_cap.amount).toBe(100);
  });

  it("refuses a negative, fractional or missing amount", async () => {
    const { key } = await orgWithKey();
    for (const amount of [-1, 1.5, "10", null]) {
      const res = await setCap({ key }, amount);
      expect(res.status).toBe(400);
      expect(res.error.error).toBe("invalid_request");
    }
  });
});

describe("the spend guard", () => {
  it("records spend.review_required once, when usage reaches 80% of the cap", async () => {
    const { org, key } = await cappedOrg();
    await assessTimes(key, 3);
    expect(await spendEvents(org.id)).toEqual([]);
    await assessTimes(key, 1);
    const events = await spendEvents(org.id);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      type: "spend.review_required",
      livemode: true,
      data: {
        spending_cap: 10,
        amount_due: 8,
        currency: "usd",
        assessments: 10_004,
        plan: "starter",
        threshold_percent: 80,
      },
    });
    await assessTimes(key, 1);
    expect(await spendEvents(org.id)).toHaveLength(1);
    expect((await getBilling({ key })).json.spending_cap.status).toBe("reached");
  });

  it("refuses a billable call once the cap is reached, with 402 and no decision", async () => {
    const { org, key } = await cappedOrg();
    await assessTimes(key, 5);
    const res = await assess(key, { mandate: payment() });
    expect(res.status).toBe(402);
    expect(res.json).toEqual(
      errorBody("spending_cap_reached", {
        spending_cap: 10,
        amount_due: 10,
        currency: "usd",
        message: expect.stringContaining("confirm"),
      }),
    );
    expect(res.text).not.toContain("approve");
    // Nothing of the refused call is stored or billed.
    expect(await metered(org.id)).toBe(10_005);
    const [count] = (await ownerSql`select count(*)::int as n from assessments
      where org_id = ${org.id}`) as { n: number }[];
    expect(count?.n).toBe(5);
  });

  it("records spend.denied once per period, not once per refused call", async () => {
    const { org, key } = await cappedOrg();
    await assessTimes(key, 5);
    for (let i = 0; i < 3; i++) {
      expect((await assess(key, { mandate: payment() })).status).toBe(402);
    }
    const denied = (await spendEvents(org.id)).filter((e) => e.type === "spend.denied");
    expect(denied).toHaveLength(1);
    expect(denied[0]?.data).toMatchObject({ spending_cap: 10, amount_due: 10, currency: "usd" });
    const ledger = (await billingLedger(org.id)).filter((e) => e.type === "spend.denied");
    expect(ledger).toHaveLength(1);
  });

  it("still answers a replay of an earlier assessment: a replay is never billed", async () => {
    const { key } = await cappedOrg();
    const body = { mandate: payment() };
    const first = await assessOk(key, body);
    await assessTimes(key, 4);
    expect((await assess(key, { mandate: payment() })).status).toBe(402);
    expect(await assessOk(key, body)).toEqual(first);
  });

  it("never refuses test-mode calls: they are not billed", async () => {
    const { org, key } = await cappedOrg();
    await assessTimes(key, 5);
    expect((await assess(key, { mandate: payment() })).status).toBe(402);
    const { key: testKey } = await org.key(undefined, "test");
    expect((await assess(testKey, { mandate: payment() })).status).toBe(200);
  });

  it("recovers after an owner's confirmation raises the cap, recording spend.confirmed", async () => {
    const { org, key } = await cappedOrg();
    await assessTimes(key, 5);
    expect((await assess(key, { mandate: payment() })).status).toBe(402);

    const res = await confirmSpend(org.token, 20);
    expect(res.status).toBe(201);
    expect(res.json).toMatchObject({
      object: "spend_confirmation",
      previous_spending_cap: 10,
      spending_cap: 20,
      currency: "usd",
    });
    const types = (await spendEvents(org.id)).map((e) => e.type);
    expect(types).toEqual(["spend.review_required", "spend.denied", "spend.confirmed"]);
    const confirmed = (await spendEvents(org.id)).find((e) => e.type === "spend.confirmed");
    expect(confirmed?.data).toMatchObject({ id: res.json.id, spending_cap: 20 });

    expect((await assess(key, { mandate: payment() })).status).toBe(200);
    expect((await getBilling({ key })).json.spending_cap.amount).toBe(20);
    expect((await billingLedger(org.id)).map((e) => e.type)).toEqual([
      "billing.spending_cap_set",
      "spend.denied",
      "spend.confirmed",
    ]);
  });

  it("lifts the cap when an owner confirms with null", async () => {
    const { org, key } = await cappedOrg();
    await assessTimes(key, 5);
    const res = await confirmSpend(org.token, null);
    expect(res.status).toBe(201);
    expect(res.json.spending_cap).toBeNull();
    await assessTimes(key, 3);
    expect((await getBilling({ key })).json.spending_cap).toMatchObject({
      amount: null,
      status: "none",
    });
  });

  it("re-arms the review threshold and the refusal for the raised cap", async () => {
    const { org, key } = await cappedOrg();
    await assessTimes(key, 5);
    await confirmSpend(org.token, 20);
    await assessTimes(key, 3); // charge 16 = 80% of 20
    expect((await assess(key, { mandate: payment() })).status).toBe(200); // 18
    expect((await assess(key, { mandate: payment() })).status).toBe(200); // 20
    expect((await assess(key, { mandate: payment() })).status).toBe(402);
    const types = (await spendEvents(org.id)).map((e) => e.type);
    expect(types).toEqual([
      "spend.review_required",
      "spend.confirmed",
      "spend.review_required",
      "spend.denied",
    ]);
  });

  it("refuses a confirmation that does not raise the cap", async () => {
    const { org } = await cappedOrg();
    const res = await confirmSpend(org.token, 10);
    expect(res.status).toBe(400);
    expect(res.error.error).toBe("invalid_request");
  });

  it("takes an owner: an admin's session cannot confirm", async () => {
    const { org } = await cappedOrg();
    const admin = await newOrg();
    await addMember(org.id, admin.subject, "admin");
    const res = await call("/v1/billing/spend_confirmations", {
      method: "POST",
      token: admin.token,
      headers: { "x-org-id": org.id },
      body: { spending_cap: 50 },
    });
    expect(res.status).toBe(403);
  });

  it("fans the spend events out as webhook deliveries", async () => {
    const { org, key } = await cappedOrg();
    const endpoint = await call("/v1/webhook-endpoints", {
      method: "POST",
      key,
      body: { url: "https://example.com/hooks/spend", eventTypes: ["spend.denied"] },
    });
    expect(endpoint.status).toBe(201);
    await assessTimes(key, 5);
    expect((await assess(key, { mandate: payment() })).status).toBe(402);
    const rows = (await ownerSql`select e.type from webhook_deliveries d
      join events e on e.id = d.event_id where d.org_id = ${org.id}`) as { type: string }[];
    expect(rows.map((r) => r.type)).toEqual(["spend.denied"]);
  });
});

describe("the cap under concurrency", () => {
  it("twenty calls at once past a cap with room for five: exactly five are metered and answered", async () => {
    // Starter, included used up, 10 cents of cap at 2 cents an assessment: room for 5.
    const { org, key } = await cappedOrg();
    const results = await Promise.all(
      Array.from({ length: 20 }, () => assess(key, { mandate: payment() })),
    );
    const statuses = results.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 200)).toHaveLength(5);
    expect(statuses.filter((s) => s === 402)).toHaveLength(15);
    for (const refused of results.filter((r) => r.status === 402)) {
      expect(refused.error.error).toBe("spending_cap_reached");
      expect(refused.json).not.toHaveProperty("outcome");
    }
    expect(await metered(org.id)).toBe(10_005);
    const [stored] = await ownerSql`select count(*)::int as n from assessments
      where org_id = ${org.id}`;
    expect(stored?.n).toBe(5);
  });
});

describe("test keys and live billing", () => {
  it("a test key may read the bill but not cap it or start a checkout", async () => {
    const { org } = await orgWithKey();
    const { key: testKey } = await org.key(undefined, "test");
    expect((await getBilling({ key: testKey })).status).toBe(200);
    const cap = await setCap({ key: testKey }, 100);
    expect(cap.status).toBe(403);
    expect(cap.error.error).toBe("live_key_required");
    const checkout = await call("/v1/billing/checkout", {
      method: "POST",
      key: testKey,
      body: {
        plan: "starter",
        success_url: "https://example.com/ok",
        cancel_url: "https://example.com/cancel",
      },
    });
    expect(checkout.status).toBe(403);
    expect(checkout.error.error).toBe("live_key_required");
  });
});
