import { beforeAll, describe, expect, it } from "vitest";
import {
  AUD,
  b64url,
  buildChain,
  CHECKOUT_JWT,
  type Claims,
  closedPayment,
  ecdsaTwin,
  element,
  hashOf,
  INSTRUMENT,
  MERCHANT,
  NONCE,
  NOW,
  newSigner,
  OTHER_MERCHANT,
  openPayment,
  RANGE,
  type Signer,
  verifyBuilt,
} from "../support/ap2-chains";

// Every constraint type AP2 v0.2 defines, over a closed mandate: one that holds and one that
// does not, and the constraint the verdict names.

let user: Signer;
let agent: Signer;
let agent2: Signer;

beforeAll(async () => {
  [user, agent, agent2] = await Promise.all([
    newSigner("ES256", "user"),
    newSigner("EdDSA", "agent"),
    newSigner("ES256", "agent-2"),
  ]);
});

interface Case {
  constraints: Claims[];
  closed?: Claims;
  open?: Claims;
  presentation?: { checkout_jwt?: string; open_checkout_hash?: string };
}

async function verdictOf({ constraints, closed = closedPayment(), open = {}, presentation }: Case) {
  const credential = await buildChain([
    { signer: user, mandate: openPayment(agent, constraints, open) },
    { signer: agent, mandate: closed },
  ]);
  return await verifyBuilt(credential, [user], { aud: AUD, nonce: NONCE, ...presentation });
}

/** The constraint a refused case names, or "ok". */
async function outcome(c: Case): Promise<string> {
  const verdict = await verdictOf(c);
  if (verdict.verified) return "ok";
  expect(verdict.failure).toBe("constraint_violated");
  return verdict.detail?.constraint ?? "?";
}

const budget = (max: number, currency = "CAD") => ({ type: "payment.budget", max, currency });
const recurrence = (extra: Claims = {}) => ({
  type: "payment.agent_recurrence",
  frequency: "ON_DEMAND",
  max_occurrences: 12,
  ...extra,
});

describe("payment constraints", () => {
  it("payment.amount_range: currency, inclusive min and max", async () => {
    expect(await outcome({ constraints: [RANGE], closed: closedPayment(10_000) })).toBe("ok");
    expect(await outcome({ constraints: [RANGE], closed: closedPayment(100) })).toBe("ok");
    for (const closed of [
      closedPayment(10_001),
      closedPayment(99),
      closedPayment(5000, { payment_amount: { amount: 5000, currency: "EUR" } }),
    ]) {
      expect(await outcome({ constraints: [RANGE], closed })).toBe("payment.amount_range");
    }
    const fractional = { ...RANGE, max: 100.5 };
    expect(await outcome({ constraints: [fractional] })).toBe("payment.amount_range");
  });

  it("payment.budget: a single payment against max in major units ×100, to the cent", async () => {
    expect(await outcome({ constraints: [budget(19.99)], closed: closedPayment(1999) })).toBe("ok");
    expect(await outcome({ constraints: [budget(19.99)], closed: closedPayment(2000) })).toBe(
      "payment.budget",
    );
    expect(await outcome({ constraints: [budget(50, "USD")] })).toBe("payment.budget");
    expect(await outcome({ constraints: [budget(-1)] })).toBe("payment.budget");
  });

  it("payment.agent_recurrence: needs amount_range and budget beside it, and a use", async () => {
    const whole = [RANGE, budget(500), recurrence()];
    expect(await outcome({ constraints: whole })).toBe("ok");
    expect(await outcome({ constraints: [RANGE, recurrence()] })).toBe("payment.agent_recurrence");
    expect(await outcome({ constraints: [budget(500), recurrence()] })).toBe(
      "payment.agent_recurrence",
    );
    for (const bad of [{ max_occurrences: 0 }, { frequency: "HOURLY" }]) {
      expect(await outcome({ constraints: [RANGE, budget(500), recurrence(bad)] })).toBe(
        "payment.agent_recurrence",
      );
    }
  });

  it("reports every budget and the smallest max_occurrences as the spend", async () => {
    const credential = await buildChain([
      { signer: user, mandate: openPayment(agent, [RANGE, budget(500), recurrence()]) },
      {
        signer: agent,
        mandate: openPayment(agent2, [RANGE, budget(80.5), recurrence({ max_occurrences: 3 })]),
      },
      { signer: agent2, mandate: closedPayment(4000) },
    ]);
    const verdict = await verifyBuilt(credential, [user]);
    const root = credential.split("~")[0] as string;
    expect(verdict.spend).toEqual({
      consent: hashOf(root.slice(0, root.lastIndexOf("."))),
      rootSpellings: [hashOf(root), hashOf(ecdsaTwin(root))],
      transactionId: hashOf(CHECKOUT_JWT),
      amount: 4000,
      currency: "CAD",
      budgets: [
        { maxMinor: 50_000, currency: "CAD" },
        { maxMinor: 8050, currency: "CAD" },
      ],
      maxOccurrences: 3,
      caps: [],
      at: NOW * 1000,
    });
  });

  it("payment.allowed_payees: a disclosed entry by id, or by name and website", async () => {
    const payees = (...allowed: Claims[]) => ({ type: "payment.allowed_payees", allowed });
    expect(await outcome({ constraints: [payees(OTHER_MERCHANT, MERCHANT)] })).toBe("ok");
    const byName = { name: MERCHANT.name, website: MERCHANT.website };
    expect(await outcome({ constraints: [payees(byName)] })).toBe("ok");
    expect(await outcome({ constraints: [payees(OTHER_MERCHANT)] })).toBe("payment.allowed_payees");
    expect(await outcome({ constraints: [payees({ name: MERCHANT.name })] })).toBe(
      "payment.allowed_payees",
    );
    expect(await outcome({ constraints: [payees()] })).toBe("payment.allowed_payees");
  });

  it("payment.allowed_payees: a withheld entry does not count", async () => {
    const hidden = element(MERCHANT);
    const credential = await buildChain([
      {
        signer: user,
        mandate: openPayment(agent, [{ type: "payment.allowed_payees", allowed: [hidden.ref] }]),
      },
      { signer: agent, mandate: closedPayment() },
    ]);
    const verdict = await verifyBuilt(credential, [user]);
    expect(verdict.detail?.constraint).toBe("payment.allowed_payees");
  });

  it("payment.allowed_payment_instruments and payment.allowed_pisps", async () => {
    const instruments = (id: string) => ({
      type: "payment.allowed_payment_instruments",
      allowed: [{ id, type: "card" }],
    });
    expect(await outcome({ constraints: [instruments(INSTRUMENT.id)] })).toBe("ok");
    expect(await outcome({ constraints: [instruments("pi-9")] })).toBe(
      "payment.allowed_payment_instruments",
    );
    const pisp = { legal_name: "Pay Ltd", brand_name: "Pay", domain_name: "pay.example" };
    const pisps = { type: "payment.allowed_pisps", allowed: [pisp] };
    expect(await outcome({ constraints: [pisps], closed: closedPayment(5000, { pisp }) })).toBe(
      "ok",
    );
    const other = { ...pisp, brand_name: "Other" };
    expect(
      await outcome({ constraints: [pisps], closed: closedPayment(5000, { pisp: other }) }),
    ).toBe("payment.allowed_pisps");
    expect(await outcome({ constraints: [pisps] })).toBe("payment.allowed_pisps");
  });

  it("payment.execution_date: read as dates; without one the payment executes now", async () => {
    const window = {
      type: "payment.execution_date",
      not_before: "2027-01-01",
      not_after: "2027-01-31",
    };
    const on = (date: string) => closedPayment(5000, { execution_date: date });
    expect(await outcome({ constraints: [window], closed: on("2027-01-31") })).toBe("ok");
    expect(await outcome({ constraints: [window], closed: on("2027-01-31T23:00:00Z") })).toBe("ok");
    expect(await outcome({ constraints: [window], closed: on("2027-02-01") })).toBe(
      "payment.execution_date",
    );
    expect(await outcome({ constraints: [window], closed: on("31/01/2027") })).toBe(
      "payment.execution_date",
    );
    // NOW is 2027-01-15T08:00Z.
    expect(await outcome({ constraints: [window] })).toBe("ok");
    const later = { ...window, not_before: "2027-01-20" };
    expect(await outcome({ constraints: [later] })).toBe("payment.execution_date");
  });

  it("payment.reference: the open checkout mandate's hash, which the caller must give", async () => {
    const reference = { type: "payment.reference", conditional_transaction_id: "open-hash" };
    const given = (hash: string) => ({ open_checkout_hash: hash });
    expect(await outcome({ constraints: [reference], presentation: given("open-hash") })).toBe(
      "ok",
    );
    expect(await outcome({ constraints: [reference], presentation: given("other") })).toBe(
      "payment.reference",
    );
    expect(await outcome({ constraints: [reference] })).toBe("payment.reference");
  });

  it("refuses an unknown constraint type, and a checkout constraint in a payment mandate", async () => {
    expect(await outcome({ constraints: [RANGE, { type: "payment.velocity", max: 3 }] })).toBe(
      "payment.velocity",
    );
    expect(await outcome({ constraints: [{ type: "checkout.line_items", items: [] }] })).toBe(
      "checkout.line_items",
    );
    expect(await outcome({ constraints: [{ max: 3 }] })).toBe("constraints");
  });

  it("requires pre-set claims to reappear unchanged", async () => {
    const preset = (open: Claims, closed = closedPayment()) =>
      outcome({ constraints: [], open, closed });
    expect(
      await preset({ payee: MERCHANT, payment_amount: { currency: "CAD", amount: 5000 } }),
    ).toBe("ok");
    expect(await preset({ payee: OTHER_MERCHANT })).toBe("preset.payee");
    expect(await preset({ payment_amount: { amount: 4999, currency: "CAD" } })).toBe(
      "preset.payment_amount",
    );
    expect(await preset({ payment_instrument: { ...INSTRUMENT, id: "pi-2" } })).toBe(
      "preset.payment_instrument",
    );
    expect(await preset({ execution_date: "2027-01-15" })).toBe("preset.execution_date");
  });

  it("checks transaction_id against the presented checkout JWT", async () => {
    expect(await outcome({ constraints: [], presentation: { checkout_jwt: CHECKOUT_JWT } })).toBe(
      "ok",
    );
    const other = `${CHECKOUT_JWT}x`;
    expect(await outcome({ constraints: [], presentation: { checkout_jwt: other } })).toBe(
      "transaction_id",
    );
  });

  it("refuses a closed payment mandate that lacks what its schema requires", async () => {
    const { payee: _, ...noPayee } = closedPayment();
    expect(await outcome({ constraints: [], closed: noPayee })).toBe("mandate.payment.1");
    const negative = closedPayment(5000, { payment_amount: { amount: -5, currency: "CAD" } });
    expect(await outcome({ constraints: [], closed: negative })).toBe("mandate.payment.1");
  });
});

describe("checkout constraints", () => {
  const checkoutJwt = (lines: [string, number][], merchant: Claims = MERCHANT) =>
    `${b64url('{"alg":"ES256"}')}.${b64url(
      JSON.stringify({
        merchant,
        line_items: lines.map(([id, quantity], i) => ({ id: `li-${i}`, item: { id }, quantity })),
      }),
    )}.c2ln`;
  const requirement = (quantity: number, ...ids: string[]) => ({
    id: `req-${ids.join("-")}`,
    quantity,
    acceptable_items: ids.map((id) => ({ id, title: id })),
  });
  const lineItems = (...items: Claims[]) => ({ type: "checkout.line_items", items });

  async function checkoutOutcome(constraints: Claims[], jwt: string, presented?: string) {
    const credential = await buildChain([
      {
        signer: user,
        mandate: { vct: "mandate.checkout.open.1", constraints, cnf: { jwk: agent.jwk } },
      },
      {
        signer: agent,
        mandate: { vct: "mandate.checkout.1", checkout_jwt: jwt, checkout_hash: hashOf(jwt) },
      },
    ]);
    const verdict = await verifyBuilt(credential, [user], {
      aud: AUD,
      nonce: NONCE,
      checkout_jwt: presented,
    });
    expect(verdict.spend).toBeNull();
    return verdict.verified ? "ok" : `${verdict.failure}:${verdict.detail?.constraint}`;
  }

  it("checkout.line_items: every unit bought fills a requirement, every requirement is filled", async () => {
    const reqs = lineItems(requirement(1, "A", "B"), requirement(2, "B", "C"));
    expect(
      await checkoutOutcome(
        [reqs],
        checkoutJwt([
          ["A", 1],
          ["B", 1],
          ["C", 1],
        ]),
      ),
    ).toBe("ok");
    // Only a max flow finds it: B must go to the second requirement, A to the first.
    expect(
      await checkoutOutcome(
        [reqs],
        checkoutJwt([
          ["B", 2],
          ["A", 1],
        ]),
      ),
    ).toBe("ok");
    const violated = "constraint_violated:checkout.line_items";
    expect(await checkoutOutcome([reqs], checkoutJwt([["B", 3]]))).toBe("ok");
    expect(await checkoutOutcome([reqs], checkoutJwt([["B", 4]]))).toBe(violated);
    expect(
      await checkoutOutcome(
        [reqs],
        checkoutJwt([
          ["A", 1],
          ["C", 1],
        ]),
      ),
    ).toBe(violated);
    expect(
      await checkoutOutcome(
        [reqs],
        checkoutJwt([
          ["A", 1],
          ["C", 2],
          ["D", 1],
        ]),
      ),
    ).toBe(violated);
  });

  it("checkout.line_items: a requirement whose acceptable items are all withheld accepts nothing", async () => {
    const hidden = { id: "req", quantity: 1, acceptable_items: [] };
    expect(await checkoutOutcome([lineItems(hidden)], checkoutJwt([["A", 1]]))).toBe(
      "constraint_violated:checkout.line_items",
    );
  });

  it("checkout.allowed_merchants", async () => {
    const allowed = { type: "checkout.allowed_merchants", allowed: [MERCHANT] };
    const reqs = lineItems(requirement(1, "A"));
    expect(await checkoutOutcome([allowed, reqs], checkoutJwt([["A", 1]]))).toBe("ok");
    expect(await checkoutOutcome([allowed, reqs], checkoutJwt([["A", 1]], OTHER_MERCHANT))).toBe(
      "constraint_violated:checkout.allowed_merchants",
    );
  });

  it("checkout_hash: binds the presented checkout, and the disclosed one must be the same", async () => {
    const reqs = [lineItems(requirement(1, "A"))];
    const jwt = checkoutJwt([["A", 1]]);
    expect(await checkoutOutcome(reqs, jwt, jwt)).toBe("ok");
    expect(await checkoutOutcome(reqs, jwt, checkoutJwt([["A", 1]], OTHER_MERCHANT))).toBe(
      "constraint_violated:checkout_hash",
    );
  });
});

it("NOW is 2027-01-15T08:00:00Z, as the execution date cases assume", () => {
  expect(new Date(NOW * 1000).toISOString()).toBe("2027-01-15T08:00:00.000Z");
});
