import { describe, expect, it } from "vitest";
import {
  AUD,
  type BuiltHop,
  buildHops,
  type Claims,
  closedPayment,
  extendHops,
  joinHops,
  NONCE,
  newSigner,
  openPayment,
  RANGE,
  type Signer,
} from "../support/ap2-chains";
import { call, type TestOrg } from "./support/api";
import { assess, createPolicy, type Json } from "./support/assess";
import { credentialOrg, expectRefused } from "./support/credentials";

// `payment.cumulative` (docs/credentials.md, "Period caps"): the sum approved under one open
// mandate within a UTC calendar period, decided by the org's ledger object like a budget.

const DAY = 86_400;
const t = () => Math.floor(Date.now() / 1000);

interface Consent {
  org: TestOrg;
  key: string;
  agent: Signer;
  root: BuiltHop[];
}

/** An org trusting a fresh issuer whose open mandate to a fresh agent has `cap`. */
async function consentWith(cap: Claims, mode: "live" | "test" = "live"): Promise<Consent> {
  const issuer = await newSigner("ES256", "issuer-1");
  const agent = await newSigner("ES256");
  const { org, key } = await credentialOrg([issuer.jwk], agent.jwk, mode);
  // An approve rule for verified mandates keeps a burst of one agent from reviewing them.
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
  const constraints = [RANGE, { type: "payment.cumulative", currency: "CAD", ...cap }];
  const root = await buildHops([
    {
      signer: issuer,
      mandate: openPayment(agent, constraints, { iat: t() - 4 * DAY, exp: t() + 3 * DAY }),
    },
  ]);
  return { org, key, agent, root };
}

/** A new presentation under the consent: a closed payment of `amount` for `tx`, signed at `iat`. */
async function payment(consent: Consent, tx: string, amount = 1000, iat = t() - 60) {
  const closed = closedPayment(amount, { transaction_id: tx, iat, exp: t() + 3 * DAY });
  const hops = await extendHops(consent.root, [
    { signer: consent.agent, mandate: closed, claims: { iat } },
  ]);
  return { credential: joinHops(hops), presentation: { aud: AUD, nonce: NONCE } };
}

const decisionOf = (res: { json: Json }) => res.json.decision as string;

describe("period caps (payment.cumulative)", () => {
  it("under concurrency, exactly as many payments approve as fit the period's cap", async () => {
    const consent = await consentWith({ max_total: 3000, period: "YEARLY" });
    const bodies = await Promise.all(
      Array.from({ length: 12 }, (_, i) => payment(consent, `tx-${i}`)),
    );
    const answers = await Promise.all(bodies.map((body) => assess(consent.key, body)));
    expect(answers.map((a) => a.status)).toEqual(answers.map(() => 200));
    expect(answers.filter((a) => decisionOf(a) === "approve")).toHaveLength(3);
    for (const answer of answers.filter((a) => decisionOf(a) !== "approve")) {
      expectRefused(answer.json.outcome, "budget_exceeded");
    }
  });

  it("refuses one payment alone above the cap as a constraint violation", async () => {
    const consent = await consentWith({ max_total: 500, period: "DAILY" });
    const res = await assess(consent.key, await payment(consent, "tx-big", 1000));
    expectRefused(res.json.outcome, "constraint_violated");
  });

  it("refuses a malformed cap (an unknown period, a fractional max_total)", async () => {
    for (const cap of [
      { max_total: 5000, period: "HOURLY" },
      { max_total: 50.5, period: "DAILY" },
    ]) {
      const consent = await consentWith(cap);
      const res = await assess(consent.key, await payment(consent, "tx-1"));
      expectRefused(res.json.outcome, "constraint_violated");
    }
  });

  it("is per mode: test approvals never spend the live cap", async () => {
    const consent = await consentWith({ max_total: 2000, period: "MONTHLY" });
    const { key: testKey } = await consent.org.key(undefined, "test");
    const pay = async (key: string, tx: string) =>
      decisionOf(await assess(key, await payment(consent, tx)));
    expect([
      await pay(testKey, "t-1"),
      await pay(testKey, "t-2"),
      await pay(testKey, "t-3"),
    ]).toEqual(["approve", "approve", "deny"]);
    expect([
      await pay(consent.key, "l-1"),
      await pay(consent.key, "l-2"),
      await pay(consent.key, "l-3"),
    ]).toEqual(["approve", "approve", "deny"]);
  });

  it("counts by the test clock's time in test mode: the next UTC day has its cap again", async () => {
    const consent = await consentWith({ max_total: 2000, period: "DAILY" }, "test");
    const startOfToday = Math.floor(t() / DAY) * DAY;
    const first = startOfToday - 2 * DAY + 12 * 3600;
    const clock = await call("/v1/test-clocks", {
      method: "POST",
      key: consent.key,
      body: { frozen_time: first },
    });
    expect(clock.status).toBe(201);
    const pay = async (tx: string) => {
      const body = { ...(await payment(consent, tx, 1000, first - 60)), test_clock: clock.json.id };
      return decisionOf(await assess(consent.key, body));
    };
    expect([await pay("d1-1"), await pay("d1-2"), await pay("d1-3")]).toEqual([
      "approve",
      "approve",
      "deny",
    ]);
    // 11:59:59 later is still the same UTC day.
    const sameDay = await call(`/v1/test-clocks/${clock.json.id}/advance`, {
      method: "POST",
      key: consent.key,
      body: { frozen_time: first + 12 * 3600 - 1 },
    });
    expect(sameDay.status).toBe(200);
    expect(await pay("d1-4")).toBe("deny");
    const nextDay = await call(`/v1/test-clocks/${clock.json.id}/advance`, {
      method: "POST",
      key: consent.key,
      body: { frozen_time: first + 12 * 3600 },
    });
    expect(nextDay.status).toBe(200);
    expect([await pay("d2-1"), await pay("d2-2"), await pay("d2-3")]).toEqual([
      "approve",
      "approve",
      "deny",
    ]);
  });
});
