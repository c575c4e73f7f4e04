import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { ledgerOf } from "../../src/ledger/ledger";
import {
  type Claims,
  closedPayment,
  ecdsaTwin,
  hashOf,
  isHighS,
  RANGE,
  signatureSpellings,
} from "../support/ap2-chains";
import { call, type RequestBody } from "./support/api";
import { assess, createPolicy, type Json } from "./support/assess";
import { consentOrg } from "./support/consents";
import { expectRefused } from "./support/credentials";

// docs/credentials.md, "One consent pays once, in every spelling and every mode": what the
// org's ledger object remembers of a consent (single use, budget, recurrence) is keyed by what
// the root's issuer signed, never by the text of its signature, and kept apart per mode.

/** 100.00 CAD in major units, as AP2 writes a budget; two payments of 60.00 do not fit. */
const BUDGET = { type: "payment.budget", max: 100, currency: "CAD" };

/**
 * A consent to a fresh agent of `alg` with a budget of 100.00 CAD, in an org whose policy
 * approves verified mandates, with a live and a test key; `presentation(rootJws, …)` is a new
 * presentation of 60.00 CAD under the root spelt `rootJws`.
 */
async function budgetedConsent(alg: "ES256" | "EdDSA") {
  const consent = await consentOrg({ alg, constraints: [RANGE, BUDGET] });
  const { key: test } = await consent.org.key(undefined, "test");
  await createPolicy(consent.org, {
    grammar: 1,
    rules: [
      {
        id: "verified-routine",
        action: "approve",
        when: { attr: "mandate.verified", op: "eq", value: true },
      },
    ],
  });
  const presentation = (rootJws: string, closed: Claims = {}) =>
    consent.present({ payment_amount: { amount: 6000, currency: "CAD" }, ...closed }, rootJws);
  return { ...consent, live: consent.key, test, presentation };
}

async function decided(key: string, body: RequestBody<"/v1/assess", "POST">) {
  const res = await assess(key, body);
  expect(res.status).toBe(200);
  return res.json;
}

describe("one consent pays once, in every spelling", () => {
  for (const alg of ["EdDSA", "ES256"] as const) {
    it(`${alg}: after a paid transaction, no spelling of the root pays it again`, async () => {
      const { live, root, presentation } = await budgetedConsent(alg);
      const paid = await decided(live, await presentation(root.jws));
      expect(paid.decision).toBe("approve");
      // The 16 base64url texts of the signature, and for ES256 the 16 of its twin (r, n − s).
      const twins = alg === "ES256" ? [root.jws, ecdsaTwin(root.jws)] : [root.jws];
      const spellings = twins.flatMap((jws) => signatureSpellings(jws));
      expect(spellings).toHaveLength(alg === "ES256" ? 32 : 16);
      for (const jws of spellings) {
        const answer = await decided(live, await presentation(jws));
        expect(answer.decision).toBe("deny");
        const canonical = twins.includes(jws);
        expectRefused(answer.outcome, canonical ? "already_consumed" : "signature_invalid");
      }
    });

    it(`${alg}: a budget spent under one spelling is spent under all`, async () => {
      const { live, root, presentation } = await budgetedConsent(alg);
      const first = await decided(live, await presentation(root.jws));
      expect(first.decision).toBe("approve");
      // Another transaction of 60.00: with the first it passes the budget of 100.00, under
      // every text of the root (the non-canonical ones are refused before the budget).
      const other = { transaction_id: "tx-other" };
      const twins = alg === "ES256" ? [root.jws, ecdsaTwin(root.jws)] : [root.jws];
      for (const jws of twins.flatMap((twin) => signatureSpellings(twin))) {
        const answer = await decided(live, await presentation(jws, other));
        expect(answer.decision).toBe("deny");
        const canonical = twins.includes(jws);
        expectRefused(answer.outcome, canonical ? "budget_exceeded" : "signature_invalid");
      }
    });
  }

  it("ES256: a high-S root verifies (as the AP2 SDK's do) and shares its low-S twin's consent", async () => {
    const { live, root, presentation } = await budgetedConsent("ES256");
    const high = isHighS(root.jws) ? root.jws : ecdsaTwin(root.jws);
    const low = ecdsaTwin(high);
    const first = await decided(live, await presentation(high));
    expect(first.decision).toBe("approve");
    expect(first.outcome.credential).toMatchObject({ verified: true, failure: null });
    const again = await decided(live, await presentation(low));
    expectRefused(again.outcome, "already_consumed");
  });
});

describe("one consent pays once in each mode: test traffic never spends a live consent", () => {
  it("the live first presentation after test approvals of the same chain is approved, and the reverse", async () => {
    const { live, test, root, presentation } = await budgetedConsent("ES256");
    const inTest = await decided(test, await presentation(root.jws));
    expect(inTest.decision).toBe("approve");
    expect(inTest.outcome.livemode).toBe(false);
    for (let i = 0; i < 3; i++) {
      const again = await decided(test, await presentation(root.jws));
      expectRefused(again.outcome, "already_consumed");
    }
    const inLive = await decided(live, await presentation(root.jws));
    expect(inLive.decision).toBe("approve");
    expect(inLive.outcome.livemode).toBe(true);
    const liveAgain = await decided(live, await presentation(root.jws));
    expectRefused(liveAgain.outcome, "already_consumed");

    // The reverse: a live approval first leaves the test mode's first presentation approved.
    const other = await budgetedConsent("EdDSA");
    const liveFirst = await decided(other.live, await other.presentation(other.root.jws));
    expect(liveFirst.decision).toBe("approve");
    const testAfter = await decided(other.test, await other.presentation(other.root.jws));
    expect(testAfter.decision).toBe("approve");
  });

  it("a live budget is untouched by test spends, and a test budget by live ones", async () => {
    const { live, test, root, presentation } = await budgetedConsent("EdDSA");
    const spend = (key: string, tx: string) =>
      presentation(root.jws, { transaction_id: tx }).then((body) => decided(key, body));
    expect((await spend(test, "tx-1")).decision).toBe("approve");
    expectRefused((await spend(test, "tx-2")).outcome, "budget_exceeded");
    // The test mode's budget is spent; the live one is whole: 60.00 fits, a second does not.
    expect((await spend(live, "tx-3")).decision).toBe("approve");
    expectRefused((await spend(live, "tx-4")).outcome, "budget_exceeded");
    // And the live spend left the test mode's total where it was: still one payment of 60.00.
    expectRefused((await spend(test, "tx-5")).outcome, "budget_exceeded");
  });

  it("a test-mode review approved never consumes the live consent", async () => {
    const { org, live, test, root, presentation } = await budgetedConsent("ES256");
    // Review every verified credential, so each one opens an item a person approves.
    await createPolicy(org, {
      grammar: 1,
      rules: [
        {
          id: "review-verified",
          action: "review",
          when: { attr: "mandate.verified", op: "eq", value: true },
        },
      ],
    });
    const reviewed = await decided(test, await presentation(root.jws));
    expect(reviewed.decision).toBe("review");
    const items = await call("/v1/reviews", { key: test });
    const item = items.json.data.find((r) => r.assessment_id === reviewed.assessmentId) as Json;
    const approved = await call(`/v1/reviews/${item.id}/resolve`, {
      method: "POST",
      key: test,
      body: { decision: "approve" },
    });
    expect(approved.status).toBe(200);
    expect(approved.json.decision).toBe("approve");

    const liveItem = await decided(live, await presentation(root.jws));
    expect(liveItem.decision).toBe("review");
    const liveItems = await call("/v1/reviews", { key: live });
    const pending = liveItems.json.data.find(
      (r) => r.assessment_id === liveItem.assessmentId,
    ) as Json;
    const liveApproved = await call(`/v1/reviews/${pending.id}/resolve`, {
      method: "POST",
      key: live,
      body: { decision: "approve" },
    });
    expect(liveApproved.status).toBe(200);
    expect(liveApproved.json.decision).toBe("approve");
  });
});

describe("spends kept before consents were keyed by content and mode", () => {
  it("an object's text-keyed spends still count, in both modes and under both ES256 spellings", async () => {
    const { org, live, test, root, presentation } = await budgetedConsent("ES256");
    // What an object kept before: the `spends` table, keyed by the SHA-256 of the root JWS as
    // it was presented (here its twin), without a mode.
    const stub = ledgerOf(env as never, org.id);
    await runInDurableObject(stub, (_, state) => {
      state.storage.sql.exec(
        `create table spends (root text not null, tx text not null, amount integer not null,
           currency text not null, sequence integer not null, primary key (root, tx))`,
      );
      state.storage.sql.exec(
        "insert into spends (root, tx, amount, currency, sequence) values (?, ?, ?, ?, ?)",
        hashOf(ecdsaTwin(root.jws)),
        closedPayment().transaction_id as string,
        6000,
        "CAD",
        -1,
      );
    });
    // The object starts again, as after a deploy: it finds the table at activation.
    await runInDurableObject(stub, (_, state) => state.abort("restart")).catch(() => undefined);
    for (const key of [live, test]) {
      const again = await decided(key, await presentation(root.jws));
      expectRefused(again.outcome, "already_consumed");
      const other = await presentation(root.jws, {
        transaction_id: "tx-2",
      });
      expectRefused((await decided(key, other)).outcome, "budget_exceeded");
    }
  });
});
