import { describe, expect, it } from "vitest";
import { type EffectFacts, effectGaps } from "../../src/control-coverage/gaps";

// The matching rules of docs/control-coverage.md at their edges, without a
// database: the HTTP suite (test/worker/control-coverage.test.ts) covers the whole world.

const REDEEMED = new Date("2026-03-01T10:00:00.600Z");
const REDEMPTION = {
  redeemedAt: REDEEMED,
  executorType: "api_key",
  executorId: "k1",
  executorLive: true,
  action: "payment.capture",
  resource: "merchant:acme/order-1",
  amount: 1000,
  currency: "USD",
};

/** An effect gated by a redeemed grant, exactly: every test changes one fact. */
function grantEffect(changes: Partial<EffectFacts> = {}): EffectFacts {
  return {
    id: "e1",
    livemode: true,
    reference: "pi_1",
    occurredAt: new Date("2026-03-01T10:00:01.000Z"),
    action: "payment.capture",
    resource: "merchant:acme/order-1",
    amount: 1000,
    currency: "USD",
    gateType: "grant",
    gateId: "g1",
    firstClaimant: "e1",
    assessment: null,
    decision: {
      id: "d1",
      decision: "ALLOW",
      grantId: "g1",
      grantExpiresAt: new Date("2026-03-01T10:05:00.000Z"),
      audience: "k1",
      action: "payment.capture",
      resource: "merchant:acme/order-1",
      amount: 1000,
      currency: "USD",
    },
    redemption: REDEMPTION,
    ...changes,
  };
}

const codes = (facts: EffectFacts) => effectGaps(facts).map((g) => g.code);

describe("matching an effect to a grant", () => {
  it("finds no gap in a matching effect after an unexpired redemption", () => {
    expect(effectGaps(grantEffect())).toEqual([]);
  });

  it("lets an effect stamped to the second of its redemption pass", () => {
    // Rails report whole seconds: 10:00:00.000 is the second the grant was redeemed in.
    expect(codes(grantEffect({ occurredAt: new Date("2026-03-01T10:00:00.000Z") }))).toEqual([]);
  });

  it("finds an effect before the second of its redemption", () => {
    const before = grantEffect({ occurredAt: new Date("2026-03-01T09:59:59.999Z") });
    expect(codes(before)).toEqual(["effect_before_gate"]);
  });

  it("finds a redemption at the very instant of expiry", () => {
    const facts = grantEffect();
    const decision = { ...facts.decision!, grantExpiresAt: REDEEMED };
    expect(codes({ ...facts, decision })).toEqual(["redeemed_after_expiry"]);
  });

  it("requires the effect to state the decision's action, resource and money", () => {
    const silent = grantEffect({ action: null, resource: null, amount: null, currency: null });
    expect(effectGaps(silent).map((g) => [g.code, g.message])).toEqual([
      [
        "gate_mismatch",
        "action not stated; resource not stated; amount not stated; currency not stated",
      ],
    ]);
    // A decision without money needs none stated; action and resource always.
    const unpricedDecision = {
      ...grantEffect().decision!,
      amount: null,
      currency: null,
    };
    const unpricedRedemption = { ...REDEMPTION, amount: null, currency: null };
    expect(
      codes(
        grantEffect({
          amount: null,
          currency: null,
          decision: unpricedDecision,
          redemption: unpricedRedemption,
        }),
      ),
    ).toEqual([]);
    expect(effectGaps(grantEffect({ resource: null }))[0]?.message).toBe("resource not stated");
  });

  it("compares what the effect states, and an amount the decision never had", () => {
    const facts = grantEffect({ resource: "merchant:acme/order-2" });
    expect(effectGaps(facts)[0]?.message).toBe(
      'resource "merchant:acme/order-2" ≠ "merchant:acme/order-1"',
    );
    const unpriced = { ...facts.decision!, amount: null, currency: null };
    const priced = grantEffect({
      decision: unpriced,
      redemption: { ...REDEMPTION, amount: null, currency: null },
    });
    expect(effectGaps(priced).map((g) => g.message)).toEqual([
      'amount 1000 ≠ null; currency "USD" ≠ null',
    ]);
  });

  it("finds a redemption by another credential than the grant's audience", () => {
    const facts = grantEffect({ redemption: { ...REDEMPTION, executorId: "k2" } });
    expect(effectGaps(facts).map((g) => [g.code, g.message])).toEqual([
      ["gate_mismatch", 'redeemed by api_key k2, the grant\'s audience is "k1"'],
    ]);
  });

  it("finds a redemption whose stated details differ from the decision's", () => {
    const facts = grantEffect({
      redemption: { ...REDEMPTION, resource: "merchant:acme/order-9", amount: 999 },
    });
    expect(effectGaps(facts).map((g) => g.message)).toEqual([
      'redemption resource "merchant:acme/order-9" ≠ "merchant:acme/order-1"; redemption amount 999 ≠ 1000',
    ]);
  });

  it("finds a grant redeemed in another mode than the effect's", () => {
    const byTestKey = grantEffect({ redemption: { ...REDEMPTION, executorLive: false } });
    expect(effectGaps(byTestKey).map((g) => [g.code, g.message])).toEqual([
      ["gate_mode_mismatch", "redeemed by a test credential; the effect is live"],
    ]);
    const testEffect = grantEffect({ livemode: false });
    expect(effectGaps(testEffect).map((g) => g.message)).toEqual([
      "redeemed by a live credential; the effect is test",
    ]);
    const unknownKey = grantEffect({ redemption: { ...REDEMPTION, executorLive: null } });
    expect(effectGaps(unknownKey).map((g) => g.message)).toEqual([
      "redeemed by an API key not found in this organization (k1); the effect is live",
    ]);
  });

  it("names an ALLOW without a grant as never redeemed", () => {
    const facts = grantEffect({ gateType: "decision", gateId: "d1" });
    const decision = { ...facts.decision!, grantId: null, grantExpiresAt: null };
    expect(effectGaps({ ...facts, decision, redemption: null })).toEqual([
      {
        code: "grant_not_redeemed",
        message: "the decision issued no grant: nothing was redeemed",
        effect_id: "e1",
        reference: "pi_1",
        occurred_at: "2026-03-01T10:00:01.000Z",
        assessment_id: null,
        decision_id: "d1",
        grant_id: null,
      },
    ]);
  });

  it("lists every gap of an effect, the reuse last", () => {
    const facts = grantEffect({
      occurredAt: new Date("2026-03-01T09:00:00.000Z"),
      amount: 999,
      firstClaimant: "e0",
    });
    expect(codes(facts)).toEqual(["effect_before_gate", "gate_mismatch", "gate_reused"]);
  });
});

describe("matching an effect to an assessment", () => {
  const approved = {
    id: "a1",
    decision: "approve",
    createdAt: new Date("2026-03-01T10:00:00.000Z"),
    amount: 19900,
    currency: "USD",
  };
  const effect = grantEffect({
    gateType: "assessment",
    gateId: "a1",
    decision: null,
    redemption: null,
    assessment: approved,
    action: "anything",
    resource: "anything",
    amount: 19900,
  });

  it("compares money only: an assessment has no action or resource", () => {
    expect(codes(effect)).toEqual([]);
    expect(effectGaps({ ...effect, amount: 100 }).map((g) => g.message)).toEqual([
      "amount 100 ≠ 19900",
    ]);
    expect(codes({ ...effect, assessment: { ...approved, amount: null, currency: null } })).toEqual(
      [],
    );
  });

  it("requires the effect to state an assessed amount", () => {
    const silent = { ...effect, amount: null, currency: null };
    expect(effectGaps(silent).map((g) => [g.code, g.message])).toEqual([
      ["gate_mismatch", "amount not stated; currency not stated"],
    ]);
    // Without an assessed amount, the effect's money is not compared.
    const unpriced = { ...approved, amount: null, currency: null };
    expect(codes({ ...silent, assessment: unpriced })).toEqual([]);
  });

  it("finds a review as not approved", () => {
    expect(
      effectGaps({ ...effect, assessment: { ...approved, decision: "review" } })[0],
    ).toMatchObject({
      code: "gate_not_approved",
      message: "the assessment decided review",
      assessment_id: "a1",
    });
  });
});
