import { env, runInDurableObject } from "cloudflare:test";
import { CompactSign } from "jose";
import { describe, expect, it } from "vitest";
import { ledgerOf } from "../../src/ledger/ledger";
import {
  AUD,
  type Claims,
  closedPayment,
  ecdsaTwin,
  element,
  hashOf,
  isHighS,
  NONCE,
  newSigner,
  openPayment,
  RANGE,
  type Signer,
  signatureSpellings,
} from "../support/ap2-chains";
import { call } from "./support/api";
import { assess, createPolicy, type Json } from "./support/assess";
import { credentialOrg, expectRefused, leafUnder } from "./support/credentials";

// docs/credentials.md, "One consent pays once, in every spelling and every mode": what the
// org's ledger object remembers of a consent (single use, budget, recurrence) is keyed by what
// the root's issuer signed, never by the text of its signature, and kept apart per mode.

const now = () => Math.floor(Date.now() / 1000);
const PRESENTATION = { aud: AUD, nonce: NONCE };
/** 100.00 CAD in major units, as AP2 writes a budget; two payments of 60.00 do not fit. */
const BUDGET = { type: "payment.budget", max: 100, currency: "CAD" };

/**
 * An org (with a live and a test key) trusting a fresh issuer of `alg`, whose agent is
 * registered and whose verified mandates the policy approves; `root` is a consent to that agent
 * with a budget of 100.00 CAD, as its segment `<root JWS>~<disclosure>`.
 */
async function consentOrg(alg: "ES256" | "EdDSA") {
  const issuer = await newSigner(alg, "issuer-1");
  const agent = await newSigner(alg);
  const { org, key: live } = await credentialOrg([issuer.jwk], agent.jwk, "live");
  const { key: test } = await org.key(undefined, "test");
  await createPolicy(org, {
    grammar: 1,
    rules: [
      {
        id: "verified-routine",
        action: "approve",
        when: { attr: "mandate.verified", op: "eq", value: true },
      },
    ],
  });
  const t = now();
  const open = openPayment(agent, [{ ...RANGE, max: 10_000 }, BUDGET], {
    iat: t - 3600,
    exp: t + 86_400,
  });
  const item = element(open);
  const claims = { delegate_payload: [item.ref], _sd_alg: "sha-256" };
  const jws = await new CompactSign(new TextEncoder().encode(JSON.stringify(claims)))
    .setProtectedHeader({ alg, typ: "example+sd-jwt", kid: "issuer-1" })
    .sign(issuer.privateKey);
  return { org, live, test, agent, root: { jws, disclosure: item.disclosure } };
}

/** A fresh last hop by `agent` (60.00 CAD) under the root spelt `rootJws`. */
async function presentation(
  rootJws: string,
  disclosure: string,
  agent: Signer,
  closed: Claims = {},
): Promise<Json> {
  const payment = { payment_amount: { amount: 6000, currency: "CAD" }, ...closed };
  const credential = await leafUnder(`${rootJws}~${disclosure}`, agent, payment);
  return { credential, presentation: PRESENTATION };
}

async function decided(key: string, body: Json) {
  const res = await assess(key, body);
  expect(res.status).toBe(200);
  return res.json;
}

describe("one consent pays once, in every spelling", () => {
  for (const alg of ["EdDSA", "ES256"] as const) {
    it(`${alg}: after a paid transaction, no spelling of the root pays it again`, async () => {
      const { live, agent, root } = await consentOrg(alg);
      const paid = await decided(live, await presentation(root.jws, root.disclosure, agent));
      expect(paid.decision).toBe("approve");
      // The 16 base64url texts of the signature, and for ES256 the 16 of its twin (r, n − s).
      const twins = alg === "ES256" ? [root.jws, ecdsaTwin(root.jws)] : [root.jws];
      const spellings = twins.flatMap((jws) => signatureSpellings(jws));
      expect(spellings).toHaveLength(alg === "ES256" ? 32 : 16);
      for (const jws of spellings) {
        const answer = await decided(live, await presentation(jws, root.disclosure, agent));
        expect(answer.decision).toBe("deny");
        const canonical = twins.includes(jws);
        expectRefused(answer.outcome, canonical ? "already_consumed" : "signature_invalid");
      }
    });

    it(`${alg}: a budget spent under one spelling is spent under all`, async () => {
      const { live, agent, root } = await consentOrg(alg);
      const first = await decided(live, await presentation(root.jws, root.disclosure, agent));
      expect(first.decision).toBe("approve");
      // Another transaction of 60.00: with the first it passes the budget of 100.00, under
      // every text of the root (the non-canonical ones are refused before the budget).
      const other = { transaction_id: "tx-other" };
      const twins = alg === "ES256" ? [root.jws, ecdsaTwin(root.jws)] : [root.jws];
      for (const jws of twins.flatMap((twin) => signatureSpellings(twin))) {
        const answer = await decided(live, await presentation(jws, root.disclosure, agent, other));
        expect(answer.decision).toBe("deny");
        const canonical = twins.includes(jws);
        expectRefused(answer.outcome, canonical ? "budget_exceeded" : "signature_invalid");
      }
    });
  }

  it("ES256: a high-S root verifies (as the AP2 SDK's do) and shares its low-S twin's consent", async () => {
    const { live, agent, root } = await consentOrg("ES256");
    const high = isHighS(root.jws) ? root.jws : ecdsaTwin(root.jws);
    const low = ecdsaTwin(high);
    const first = await decided(live, await presentation(high, root.disclosure, agent));
    expect(first.decision).toBe("approve");
    expect(first.outcome.credential).toMatchObject({ verified: true, failure: null });
    const again = await decided(live, await presentation(low, root.disclosure, agent));
    expectRefused(again.outcome, "already_consumed");
  });
});

describe("one consent pays once in each mode: test traffic never spends a live consent", () => {
  it("the live first presentation after test approvals of the same chain is approved, and the reverse", async () => {
    const { live, test, agent, root } = await consentOrg("ES256");
    const inTest = await decided(test, await presentation(root.jws, root.disclosure, agent));
    expect(inTest.decision).toBe("approve");
    expect(inTest.outcome.livemode).toBe(false);
    for (let i = 0; i < 3; i++) {
      const again = await decided(test, await presentation(root.jws, root.disclosure, agent));
      expectRefused(again.outcome, "already_consumed");
    }
    const inLive = await decided(live, await presentation(root.jws, root.disclosure, agent));
    expect(inLive.decision).toBe("approve");
    expect(inLive.outcome.livemode).toBe(true);
    const liveAgain = await decided(live, await presentation(root.jws, root.disclosure, agent));
    expectRefused(liveAgain.outcome, "already_consumed");

    // The reverse: a live approval first leaves the test mode's first presentation approved.
    const other = await consentOrg("EdDSA");
    const liveFirst = await decided(
      other.live,
      await presentation(other.root.jws, other.root.disclosure, other.agent),
    );
    expect(liveFirst.decision).toBe("approve");
    const testAfter = await decided(
      other.test,
      await presentation(other.root.jws, other.root.disclosure, other.agent),
    );
    expect(testAfter.decision).toBe("approve");
  });

  it("a live budget is untouched by test spends, and a test budget by live ones", async () => {
    const { live, test, agent, root } = await consentOrg("EdDSA");
    const spend = (key: string, tx: string) =>
      presentation(root.jws, root.disclosure, agent, { transaction_id: tx }).then((body) =>
        decided(key, body),
      );
    expect((await spend(test, "tx-1")).decision).toBe("approve");
    expectRefused((await spend(test, "tx-2")).outcome, "budget_exceeded");
    // The test mode's budget is spent; the live one is whole: 60.00 fits, a second does not.
    expect((await spend(live, "tx-3")).decision).toBe("approve");
    expectRefused((await spend(live, "tx-4")).outcome, "budget_exceeded");
    // And the live spend left the test mode's total where it was: still one payment of 60.00.
    expectRefused((await spend(test, "tx-5")).outcome, "budget_exceeded");
  });

  it("a test-mode review approved never consumes the live consent", async () => {
    const { org, live, test, agent, root } = await consentOrg("ES256");
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
    const reviewed = await decided(test, await presentation(root.jws, root.disclosure, agent));
    expect(reviewed.decision).toBe("review");
    const items = await call("/v1/reviews", { key: test });
    const item = (items.json.data as Json[]).find(
      (r) => r.assessment_id === reviewed.assessmentId,
    ) as Json;
    const approved = await call(`/v1/reviews/${item.id}/resolve`, {
      method: "POST",
      key: test,
      body: { decision: "approve" },
    });
    expect(approved.status).toBe(200);
    expect(approved.json.decision).toBe("approve");

    const liveItem = await decided(live, await presentation(root.jws, root.disclosure, agent));
    expect(liveItem.decision).toBe("review");
    const liveItems = await call("/v1/reviews", { key: live });
    const pending = (liveItems.json.data as Json[]).find(
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
    const { org, live, test, agent, root } = await consentOrg("ES256");
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
      const again = await decided(key, await presentation(root.jws, root.disclosure, agent));
      expectRefused(again.outcome, "already_consumed");
      const other = await presentation(root.jws, root.disclosure, agent, {
        transaction_id: "tx-2",
      });
      expectRefused((await decided(key, other)).outcome, "budget_exceeded");
    }
  });
});
