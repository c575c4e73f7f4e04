import { beforeAll, describe, expect, it } from "vitest";
import {
  b64url,
  buildChain,
  closedPayment,
  element,
  type HopSpec,
  hashOf,
  MERCHANT,
  newSigner,
  OTHER_MERCHANT,
  openPayment,
  property,
  RANGE,
  type Signer,
  verifyBuilt,
} from "../support/ap2-chains";

// Selective disclosure as RFC 9901 requires it, and AP2's one delegate item per hop.

let issuer: Signer;
let agent: Signer;

beforeAll(async () => {
  [issuer, agent] = await Promise.all([newSigner("ES256", "issuer"), newSigner("ES256", "agent")]);
});

function twoHops(root: Partial<HopSpec> = {}, leaf: Partial<HopSpec> = {}): HopSpec[] {
  return [
    { signer: issuer, mandate: openPayment(agent, [RANGE]), ...root },
    { signer: agent, mandate: closedPayment(), ...leaf },
  ];
}

async function verdictOf(specs: HopSpec[]) {
  return await verifyBuilt(await buildChain(specs), [issuer]);
}

const decoy = () => ({ "...": hashOf(`decoy-${Math.random()}`) });

describe("credential disclosures", () => {
  it("refuses a disclosure that no digest references", async () => {
    const stray = property("risk_data", { score: 1 }).disclosure;
    const verdict = await verdictOf(twoHops({ extraDisclosures: [stray] }));
    expect(verdict.openMandates).toHaveLength(1);
    expect(verdict.failure).toBe("disclosure_invalid");
    expect(verdict.detail?.message).toMatch(/referenced by no digest/);
  });

  it("refuses the same disclosure sent twice", async () => {
    const risk = property("risk_data", { score: 1 });
    const root = {
      mandate: { ...openPayment(agent, [RANGE]), _sd: [risk.digest] },
      nested: [risk.disclosure],
      extraDisclosures: [risk.disclosure],
    };
    expect((await verdictOf(twoHops(root))).failure).toBe("disclosure_invalid");
  });

  it("refuses a digest that appears twice in the payload", async () => {
    // Twice in one array: no name collides, so only the digest rule can refuse it.
    const payee = element(MERCHANT);
    const payees = { type: "payment.allowed_payees", allowed: [payee.ref, payee.ref] };
    const root = { mandate: openPayment(agent, [payees]), nested: [payee.disclosure] };
    const verdict = await verdictOf(twoHops(root));
    expect(verdict.failure).toBe("disclosure_invalid");
    expect(verdict.detail?.message).toMatch(/digest appears twice/);
  });

  it("refuses a disclosed name that collides with a plain claim", async () => {
    const shadow = property("constraints", []);
    const root = {
      mandate: { ...openPayment(agent, [RANGE]), _sd: [shadow.digest] },
      nested: [shadow.disclosure],
    };
    expect((await verdictOf(twoHops(root))).failure).toBe("disclosure_invalid");
  });

  it("refuses a property disclosure referenced as an array element", async () => {
    const misplaced = property("id", "m-1");
    const payees = { type: "payment.allowed_payees", allowed: [{ "...": misplaced.digest }] };
    const root = { mandate: openPayment(agent, [payees]), nested: [misplaced.disclosure] };
    expect((await verdictOf(twoHops(root))).failure).toBe("disclosure_invalid");
  });

  it("refuses disclosures that are not [salt, value] or [salt, name, value]", async () => {
    for (const bad of [
      b64url('{"salt":"s"}'),
      b64url('["s","a","b","c"]'),
      b64url('[1,"a"]'),
      b64url('["s","_sd",[]]'),
      `${b64url('["s",1]')}x`,
    ]) {
      const verdict = await verdictOf(twoHops({ extraDisclosures: [bad] }));
      expect(verdict.failure, bad).toBe("disclosure_invalid");
    }
  });

  it("refuses an _sd_alg other than sha-256", async () => {
    const verdict = await verdictOf(twoHops({}, { claims: { _sd_alg: "sha-512" } }));
    expect(verdict.failure).toBe("disclosure_invalid");
  });

  it("resolves array-element disclosures recursively and omits withheld ones", async () => {
    const website = property("website", MERCHANT.website);
    const nested = element({ id: MERCHANT.id, name: MERCHANT.name, _sd: [website.digest] });
    const withheld = element(OTHER_MERCHANT);
    const payees = { type: "payment.allowed_payees", allowed: [nested.ref, withheld.ref] };
    const verdict = await verdictOf(
      twoHops({
        mandate: openPayment(agent, [payees]),
        nested: [nested.disclosure, website.disclosure],
      }),
    );
    expect(verdict.verified).toBe(true);
    expect(verdict.openMandates[0]?.constraints).toEqual([
      { type: "payment.allowed_payees", allowed: [MERCHANT] },
    ]);
  });

  it("accepts decoy digests beside the one disclosed delegate item", async () => {
    const leaf = { delegatePayload: (ref: object) => [decoy(), ref, decoy()] };
    expect((await verdictOf(twoHops({}, leaf))).verified).toBe(true);
  });

  it("refuses two disclosed delegate items", async () => {
    const second = element(closedPayment(1));
    const two = {
      delegatePayload: (ref: object) => [ref, second.ref],
      nested: [second.disclosure],
    };
    const verdict = await verdictOf(twoHops({}, two));
    expect(verdict.failure).toBe("disclosure_invalid");
    expect(verdict.detail?.message).toMatch(/exactly one delegate item.*found 2/);
  });

  // A hop must carry a disclosure: these carry a top-level one instead of the item's.
  const risk = property("risk", 1);
  const otherDisclosure = { claims: { _sd: [risk.digest] }, extraDisclosures: [risk.disclosure] };

  it("refuses a hop whose delegate item is withheld", async () => {
    const verdict = await verdictOf(twoHops({}, { ...otherDisclosure, withholdItem: true }));
    expect(verdict.failure).toBe("disclosure_invalid");
    expect(verdict.detail?.message).toMatch(/exactly one delegate item.*found 0/);
  });

  it("refuses a delegate item sent in clear rather than disclosed", async () => {
    const clear = { delegatePayload: () => [closedPayment()], withholdItem: true };
    const verdict = await verdictOf(twoHops({}, { ...otherDisclosure, ...clear }));
    expect(verdict.failure).toBe("disclosure_invalid");
    expect(verdict.detail?.message).toMatch(/digests only/);
  });

  it("keeps a disclosed __proto__ claim as data, never as a prototype", async () => {
    const proto = property("__proto__", { polluted: true });
    const leaf = {
      mandate: { ...closedPayment(), _sd: [proto.digest] },
      nested: [proto.disclosure],
    };
    const verdict = await verdictOf(twoHops({}, leaf));
    expect(verdict.verified).toBe(true);
    expect(Object.getPrototypeOf(verdict.mandate)).toBe(Object.prototype);
    expect(Object.hasOwn(verdict.mandate ?? {}, "__proto__")).toBe(true);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});
