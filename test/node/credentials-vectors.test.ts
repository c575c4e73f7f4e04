import { readFileSync } from "node:fs";
import { join } from "node:path";
import { calculateJwkThumbprint, type JWK } from "jose";
import { describe, expect, it } from "vitest";
import { parseChain } from "../../src/ap2-credentials/chain";
import { judgeSpend } from "../../src/ap2-credentials/spend";
import { verifyChain } from "../../src/ap2-credentials/verify";
import { ecdsaTwin, hashOf } from "../support/ap2-chains";
import { FAILURE_OF_LABEL } from "../support/ap2-vector-labels";

// The AP2 v0.2 vectors made by the reference SDK (test/fixtures/ap2-v0.2-vectors/README.md):
// each single credential verified alone, as `expected_outcome` says (never `sdk_verdict`).

const DIR = join(import.meta.dirname, "../fixtures/ap2-v0.2-vectors");
const load = (name: string) => JSON.parse(readFileSync(join(DIR, `${name}.json`), "utf8"));
const index = load("index") as {
  cases: { name: string; expected_outcome: "accept" | "reject"; reject_reason: string | null }[];
  sequences: { name: string }[];
};

interface Fixture {
  credential: string;
  expected_aud: string;
  expected_nonce: string;
  trusted_keys: { role: string; jwk: JWK }[];
  decoded: Record<string, unknown>[] | null;
  closed_mandate_reference: string | null;
  constraint_inputs?: {
    checkout_jwt?: string;
    mandate_context?: { total_amount: number; total_uses: number };
  };
  verify_params: { current_time: number; clock_skew_seconds: number };
  chain_keys: { hop: number; role: string; jwk: JWK }[];
}

async function verifyFixture(f: Fixture, step: Partial<Fixture> = {}) {
  const { credential, expected_aud, expected_nonce, constraint_inputs } = { ...f, ...step };
  return await verifyChain(parseChain(credential), {
    anchors: { keys: f.trusted_keys.map((k) => ({ issuerId: k.role, jwk: k.jwk })) },
    presentation: {
      aud: expected_aud,
      nonce: expected_nonce,
      checkout_jwt: constraint_inputs?.checkout_jwt,
    },
    now: f.verify_params.current_time,
    skewSeconds: 300,
  });
}

describe("AP2 v0.2 vectors: single credentials", () => {
  it("covers all 28 cases", () => {
    expect(index.cases).toHaveLength(28);
  });

  for (const { name, expected_outcome, reject_reason } of index.cases) {
    const fixture = load(name) as Fixture;

    if (expected_outcome === "accept") {
      it(`${name} verifies, with the SDK's reference and payloads`, async () => {
        const verdict = await verifyFixture(fixture);
        expect(verdict).toMatchObject({ verified: true, failure: null, detail: null });
        expect(verdict.reference).toBe(fixture.closed_mandate_reference);
        expect([...verdict.openMandates, verdict.mandate]).toEqual(fixture.decoded);
        expect(verdict.vct).toBe(fixture.decoded?.at(-1)?.vct);
        expect(verdict.issuerId).toBe(fixture.trusted_keys[0]?.role);
        const holder = fixture.chain_keys.at(-1)?.jwk as JWK;
        expect(verdict.holderThumbprint).toBe(await calculateJwkThumbprint(holder, "sha256"));
      });
      continue;
    }

    if (reject_reason === "vct") {
      it(`${name} is refused as an unknown mandate type (vctKnown false)`, async () => {
        const verdict = await verifyFixture(fixture);
        expect(verdict).toMatchObject({ verified: false, failure: null, vctKnown: false });
        expect(verdict.vct).toBe("mandate.payment");
      });
      continue;
    }

    if (reject_reason === "constraint_budget") {
      // The same credential as payment_valid_recurring_budget: it is refused only because of
      // what was spent before (mandate_context), which the Durable Object decides from `spend`.
      it(`${name} verifies alone, and its spend exceeds the budget after the prior spend`, async () => {
        const verdict = await verifyFixture(fixture);
        expect(verdict.verified).toBe(true);
        const prior = fixture.constraint_inputs?.mandate_context;
        const recorded = { transactionIds: new Set<string>(), total: prior?.total_amount ?? 0 };
        const judged = judgeSpend(verdict.spend!, { ...recorded, count: prior?.total_uses ?? 0 });
        expect(judged?.refusal).toBe("budget_exceeded");
      });
      continue;
    }

    const failure = FAILURE_OF_LABEL[reject_reason as string];
    it(`${name} is refused: ${reject_reason} -> ${failure}`, async () => {
      expect(failure).toBeDefined();
      const verdict = await verifyFixture(fixture);
      expect(verdict).toMatchObject({ verified: false, failure, spend: null });
      expect(verdict.detail?.message).toEqual(expect.any(String));
      // What was presented is still reported.
      expect(verdict.hops).toBe(fixture.credential.split("~~").length);
      expect(verdict.consent).toEqual(expect.any(String));
      expect(verdict.reference).toBe(fixture.closed_mandate_reference);
    });
  }

  it("names the violated constraint, and reports the refused chain's mandate", async () => {
    const fixture = load("payment_invalid_amount_exceeds_max") as Fixture;
    const verdict = await verifyFixture(fixture);
    expect(verdict.detail).toEqual({
      constraint: "payment.amount_range",
      message: expect.stringContaining("exceeds"),
    });
    expect(verdict.mandate).toEqual(fixture.decoded?.at(-1));
    expect(verdict.reference).toBe(fixture.closed_mandate_reference);
  });

  it("reports the leaf mandate even when the root is not trusted", async () => {
    const verdict = await verifyFixture(load("payment_invalid_untrusted_root") as Fixture);
    expect(verdict).toMatchObject({
      failure: "untrusted_issuer",
      issuerId: null,
      vct: "mandate.payment.1",
    });
    expect(verdict.openMandates).toHaveLength(1);
    expect(verdict.mandate).toMatchObject({ payment_amount: expect.any(Object) });
  });

  it("payment_valid_recurring_budget's prior spend still fits (the Durable Object approves)", async () => {
    const fixture = load("payment_valid_recurring_budget") as Fixture;
    const verdict = await verifyFixture(fixture);
    const prior = fixture.constraint_inputs?.mandate_context;
    expect(verdict.spend?.budgets).toEqual([{ maxMinor: 219_000, currency: "CAD" }]);
    const judged = judgeSpend(verdict.spend!, {
      transactionIds: new Set(),
      total: prior?.total_amount ?? Number.NaN,
      count: prior?.total_uses ?? Number.NaN,
    });
    expect(judged).toBeNull();
  });
});

interface Step {
  credential: string;
  expected_aud: string;
  expected_nonce: string;
  expected_outcome: "accept" | "reject";
  reject_reason: "already_consumed" | "budget_exceeded" | null;
  transaction_id: string;
  payment_amount: number;
  state_before: { total_amount: number; total_uses: number; approved_transaction_ids: string[] };
  constraint_inputs: Fixture["constraint_inputs"];
  closed_mandate_reference: string;
}

describe("AP2 v0.2 vectors: sequences", () => {
  for (const { name } of index.sequences) {
    const sequence = load(name) as Fixture & { root_issuer_jwt_hash: string; steps: Step[] };
    const budget = (
      sequence.steps[0] as unknown as { decoded: { constraints: unknown[] }[] }
    ).decoded[0]?.constraints.find((c) => (c as { type: string }).type === "payment.budget") as {
      max: number;
    };

    sequence.steps.forEach((step, i) => {
      it(`${name} step ${i + 1} verifies alone and reports its spend`, async () => {
        const verdict = await verifyFixture(sequence, step);
        expect(verdict.verified).toBe(true);
        expect(verdict.reference).toBe(step.closed_mandate_reference);
        const root = step.credential.split("~")[0] as string;
        // What the root's issuer signed, not its text; the text's digest (the SDK's
        // `issuer_jwt_hash` of the root) still finds spends kept by it before.
        const consent = hashOf(root.slice(0, root.lastIndexOf(".")));
        expect(verdict.spend).toEqual({
          consent,
          rootSpellings: [sequence.root_issuer_jwt_hash, hashOf(ecdsaTwin(root))],
          transactionId: step.transaction_id,
          amount: step.payment_amount,
          currency: "CAD",
          budgets: [{ maxMinor: Math.round(budget.max * 100), currency: "CAD" }],
          maxOccurrences: 12,
          caps: [],
          at: sequence.verify_params.current_time * 1000,
        });
        expect(verdict.consent).toBe(consent);
      });

      it(`${name} step ${i + 1}: after state_before the spend is ${step.reject_reason ?? "approved"}`, async () => {
        const verdict = await verifyFixture(sequence, step);
        const before = step.state_before;
        const judged = judgeSpend(verdict.spend!, {
          transactionIds: new Set(before.approved_transaction_ids),
          total: before.total_amount,
          count: before.total_uses,
        });
        expect(judged?.refusal ?? null).toBe(step.reject_reason);
      });
    });
  }
});
