import { createLocalJWKSet, type JSONWebKeySet, jwtVerify } from "jose";
import { describe, expect, it } from "vitest";
import { RANGE } from "../support/ap2-chains";
import { call, callRaw, newOrg } from "./support/api";
import { createPolicy } from "./support/assess";
import { mandateOf } from "./support/credentials";

// GET /v1/mandate-budgets/{reference} (AP2 #207): what remains of an open mandate's budget, as
// a JWS another merchant verifies offline with the key set (docs/credentials.md).

const CONSTRAINTS = [
  RANGE,
  { type: "payment.budget", max: 100, currency: "CAD" },
  { type: "payment.cumulative", max_total: 3000, currency: "CAD", period: "MONTHLY" },
];

async function spentOrg() {
  const org = await newOrg();
  const { key } = await org.key();
  await createPolicy(org, {
    grammar: 1,
    rules: [
      {
        id: "verified",
        action: "approve",
        when: { attr: "mandate.verified", op: "eq", value: true },
      },
    ],
  });
  const mandate = await mandateOf(org, CONSTRAINTS);
  for (const amount of [1000, 1500]) {
    expect((await mandate.pay(key, amount)).decision).toBe("approve");
  }
  return { org, key, mandate };
}

async function keySet(): Promise<JSONWebKeySet> {
  return (await callRaw("/.well-known/jwks.json")).json as JSONWebKeySet;
}

describe("GET /v1/mandate-budgets/{reference}", () => {
  it("states what was spent and what remains, overall and in the period, signed ES256", async () => {
    const { key, mandate } = await spentOrg();
    const res = await call(`/v1/mandate-budgets/${mandate.reference}`, { key });
    expect(res.status).toBe(200);
    const now = new Date();
    const start = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)).toISOString();
    const end = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)).toISOString();
    expect(res.json).toMatchObject({
      object: "mandate_budget",
      reference: mandate.reference,
      livemode: true,
      currency: "CAD",
      max_amount: 10_000,
      spent: 2500,
      remaining: 7500,
      uses: 2,
      max_uses: null,
      periods: [{ period: "MONTHLY", start, end, max_total: 3000, spent: 2500, remaining: 500 }],
    });
    // Offline: only the key set, no call back to the service.
    const { payload, protectedHeader } = await jwtVerify(
      res.json.jws,
      createLocalJWKSet(await keySet()),
      { algorithms: ["ES256"], typ: "mandate-budget+jwt" },
    );
    expect(protectedHeader.alg).toBe("ES256");
    const { object: _o, issued_at, expires_at, jws: _j, ...statement } = res.json;
    expect(payload).toMatchObject({ ...statement, sub: mandate.reference });
    expect(payload.iss).toEqual(expect.stringMatching(/^https?:\/\//));
    expect((payload.exp as number) - (payload.iat as number)).toBe(300);
    expect(new Date((payload.iat as number) * 1000).toISOString()).toBe(issued_at);
    expect(new Date((payload.exp as number) * 1000).toISOString()).toBe(expires_at);
  });

  it("moves with the next approval, and a payment past the period cap is refused and not counted", async () => {
    const { key, mandate } = await spentOrg();
    expect((await mandate.pay(key, 500)).decision).toBe("approve");
    expect((await mandate.pay(key, 100)).decision).toBe("deny");
    const res = await call(`/v1/mandate-budgets/${mandate.reference}`, { key });
    expect(res.json).toMatchObject({ spent: 3000, remaining: 7000, uses: 3 });
    expect(res.json.periods[0]).toMatchObject({ spent: 3000, remaining: 0 });
  });

  it("is per mode: a test key sees nothing the live mode spent (404)", async () => {
    const { org, mandate } = await spentOrg();
    const { key: testKey } = await org.key(undefined, "test");
    const res = await call(`/v1/mandate-budgets/${mandate.reference}`, { key: testKey });
    expect(res.status).toBe(404);
  });

  it("answers 404 to a reference the org approved nothing under, or that is no digest", async () => {
    const { key } = await spentOrg();
    for (const reference of ["A".repeat(43), "not-a-digest", "%2E%2E", "A".repeat(44)]) {
      const res = await callRaw(`/v1/mandate-budgets/${reference}`, { key });
      expect(res.status).toBe(404);
      expect(res.json).toMatchObject({ error: expect.stringMatching(/not_found/) });
    }
  });
});
