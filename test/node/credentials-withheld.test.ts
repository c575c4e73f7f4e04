import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { JWK } from "jose";
import { beforeAll, describe, expect, it } from "vitest";
import { parseChain } from "../../src/ap2-credentials/chain";
import { verifyChain } from "../../src/ap2-credentials/verify";
import {
  AUD,
  buildChain,
  closedPayment,
  element,
  type HopSpec,
  NONCE,
  NOW,
  newSigner,
  openPayment,
  RANGE,
  type Signer,
} from "../support/ap2-chains";

// AP2 #339: a constraint the issuer made selectively disclosable can be withheld by the holder,
// and would silently not apply. An issuer's `required_constraints` must be disclosed in the
// root's open mandate, else `constraint_withheld`.

let issuer: Signer;
let agent: Signer;
let agent2: Signer;

beforeAll(async () => {
  [issuer, agent, agent2] = await Promise.all([
    newSigner("ES256", "issuer"),
    newSigner("ES256", "agent"),
    newSigner("ES256", "agent2"),
  ]);
});

const BUDGET = { type: "payment.budget", max: 500, currency: "CAD" };

/** The root's constraints: RANGE, and the budget as a selectively disclosable element. */
function rootWithBudget(disclosed: boolean): Partial<HopSpec> {
  const budget = element(BUDGET);
  return {
    mandate: openPayment(agent, [RANGE, budget.ref]),
    nested: disclosed ? [budget.disclosure] : [],
  };
}

async function verdictOf(specs: HopSpec[], required: string[] | undefined) {
  return await verifyChain(parseChain(await buildChain(specs)), {
    anchors: {
      keys: [{ issuerId: "issuer", jwk: issuer.jwk, requiredConstraints: required }],
    },
    presentation: { aud: AUD, nonce: NONCE },
    now: NOW,
  });
}

function twoHops(root: Partial<HopSpec>): HopSpec[] {
  return [
    { signer: issuer, mandate: openPayment(agent, [RANGE]), ...root },
    { signer: agent, mandate: closedPayment() },
  ];
}

describe("withheld constraints (required_constraints)", () => {
  it("refuses a root whose holder withheld a constraint its issuer requires", async () => {
    const verdict = await verdictOf(twoHops(rootWithBudget(false)), ["payment.budget"]);
    expect(verdict).toMatchObject({
      verified: false,
      failure: "constraint_withheld",
      detail: { constraint: "payment.budget" },
      spend: null,
    });
    expect(verdict.detail?.message).toMatch(/does not disclose payment.budget/);
  });

  it("accepts the same root with the constraint disclosed, and the budget then applies", async () => {
    const verdict = await verdictOf(twoHops(rootWithBudget(true)), ["payment.budget"]);
    expect(verdict.verified).toBe(true);
    expect(verdict.spend?.budgets).toEqual([{ maxMinor: 50_000, currency: "CAD" }]);
  });

  it("without a requirement, a withheld constraint is a decoy as before (it cannot be seen)", async () => {
    const verdict = await verdictOf(twoHops(rootWithBudget(false)), undefined);
    expect(verdict.verified).toBe(true);
    expect(verdict.spend?.budgets).toEqual([]);
  });

  it("applies only the requirements of the mandate's kind", async () => {
    const verdict = await verdictOf(twoHops({}), ["checkout.line_items"]);
    expect(verdict.verified).toBe(true);
  });

  it("requires every listed type, naming the first missing", async () => {
    const verdict = await verdictOf(twoHops({}), [
      "payment.amount_range",
      "payment.allowed_payees",
    ]);
    expect(verdict).toMatchObject({
      failure: "constraint_withheld",
      detail: { constraint: "payment.allowed_payees" },
    });
  });

  it("an intermediate hop's constraint does not stand in for the issuer's", async () => {
    const specs: HopSpec[] = [
      { signer: issuer, mandate: openPayment(agent, [RANGE]) },
      { signer: agent, mandate: openPayment(agent2, [RANGE, BUDGET]) },
      { signer: agent2, mandate: closedPayment() },
    ];
    const verdict = await verdictOf(specs, ["payment.budget"]);
    expect(verdict.failure).toBe("constraint_withheld");
  });

  it("is checked after the signatures: an untrusted root is untrusted_issuer first", async () => {
    const other = await newSigner("ES256", "issuer");
    const specs = twoHops(rootWithBudget(false));
    specs[0] = { ...specs[0], signer: other } as HopSpec;
    const verdict = await verdictOf(specs, ["payment.budget"]);
    expect(verdict.failure).toBe("untrusted_issuer");
  });
});

describe("withheld constraints: the AP2 vectors", () => {
  const dir = join(import.meta.dirname, "../fixtures/ap2-v0.2-vectors");
  const fixture = JSON.parse(
    readFileSync(join(dir, "payment_valid_selective_disclosure.json"), "utf8"),
  ) as {
    credential: string;
    expected_aud: string;
    expected_nonce: string;
    trusted_keys: { role: string; jwk: JWK }[];
    verify_params: { current_time: number };
  };
  const verify = async (required: string[]) =>
    await verifyChain(parseChain(fixture.credential), {
      anchors: {
        keys: fixture.trusted_keys.map((k) => ({
          issuerId: k.role,
          jwk: k.jwk,
          requiredConstraints: required,
        })),
      },
      presentation: { aud: fixture.expected_aud, nonce: fixture.expected_nonce },
      now: fixture.verify_params.current_time,
    });

  it("payment_valid_selective_disclosure still verifies when its disclosed constraint is required", async () => {
    expect((await verify(["payment.amount_range"])).verified).toBe(true);
  });

  it("payment_valid_selective_disclosure is constraint_withheld when its issuer requires a budget", async () => {
    const verdict = await verify(["payment.amount_range", "payment.budget"]);
    expect(verdict).toMatchObject({
      failure: "constraint_withheld",
      detail: { constraint: "payment.budget" },
    });
  });
});
