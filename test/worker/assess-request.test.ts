import { describe, expect, it } from "vitest";
import { canonicalize } from "#audit/canonical";
import { mandateCanonicalHash, parseAssessRequest } from "../../src/assess/request";
import { ApiError, errorMessages } from "../../src/errors";
import checkoutExample from "../fixtures/ap2/checkout_mandate.json";
import openCheckoutExample from "../fixtures/ap2/open_checkout_mandate.json";
import openPaymentExample from "../fixtures/ap2/open_payment_mandate.json";
import paymentExample from "../fixtures/ap2/payment_mandate.json";

type Json = Record<string, any>;

/** A fresh deep copy, so that a test may mutate its mandate freely. */
function copy<T>(value: T): T {
  return structuredClone(value);
}

const examples = {
  payment: paymentExample,
  open_payment: openPaymentExample,
  checkout: checkoutExample,
  open_checkout: openCheckoutExample,
} as const;

/**
 * What parseAssessRequest threw: status and body, as the error handler would answer, less the
 * message, which is checked here to be its code's own sentence (src/errors.ts).
 */
function rejection(body: unknown, a2aHeader: string | null = null) {
  try {
    parseAssessRequest(body, a2aHeader);
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    const { message, ...rest } = error.body;
    expect(message).toBe(errorMessages[error.code]);
    return { status: error.status, body: rest };
  }
  throw new Error("expected the request to be rejected");
}

function paths(body: unknown, a2aHeader: string | null = null): string[] {
  const { body: answer } = rejection(body, a2aHeader);
  return (answer.details as { path: string }[]).map((detail) => detail.path);
}

/** Deletes the value at a dotted path (array indexes as numbers) from a copy of `mandate`. */
function without(mandate: Json, path: string): Json {
  const result = copy(mandate);
  const keys = path.split(".");
  const last = keys.pop()!;
  let target: any = result;
  for (const key of keys) target = target[key];
  delete target[last];
  return result;
}

function withValue(mandate: Json, path: string, value: unknown): Json {
  const result = copy(mandate);
  const keys = path.split(".");
  const last = keys.pop()!;
  let target: any = result;
  for (const key of keys) target = target[key];
  target[last] = value;
  return result;
}

describe("the AP2 v0.2 reference examples", () => {
  it.each(Object.entries(examples))(
    "accept the %s example, its type derived from vct",
    (type, m) => {
      const mandate = copy(m) as Json;
      const parsed = parseAssessRequest({ mandate }, null);
      expect(parsed.kind).toBe("ap2_payment");
      expect(parsed.mandateType).toBe(type);
      expect(parsed.mandate).toBe(mandate);
      expect(parsed.a2a).toBeNull();
      expect(parsed.idempotencyKey).toBeNull();
    },
  );

  it.each(Object.entries(examples))(
    "accept the %s example with its mandateType stated",
    (type, m) => {
      expect(parseAssessRequest({ mandate: copy(m), mandateType: type }, null).mandateType).toBe(
        type,
      );
    },
  );

  it("extract the facts of a payment mandate", () => {
    expect(parseAssessRequest({ mandate: copy(paymentExample) }, null).facts).toEqual({
      amount: { amount: 19900, currency: "USD" },
      payee: { id: "merchant_1", name: "Demo Merchant", website: "https://demo-merchant.example" },
      recipient: null,
      channel: null,
      transactionId: "NivWhuqfzcvZNapvIEJ2-3tsdQLkiuIcye2g46WVgX8",
      executionDate: null,
      instrumentType: "card",
      riskData: null,
      holderKey: null,
      limits: null,
      issuedAt: null,
      expiresAt: null,
    });
  });

  it("extract the holder key and the limits of an open payment mandate", () => {
    const facts = parseAssessRequest({ mandate: copy(openPaymentExample) }, null).facts;
    expect(facts.holderKey).toEqual(openPaymentExample.cnf.jwk);
    expect(facts.limits?.maxAmounts).toEqual([{ amount: 20000, currency: "USD" }]);
    expect(facts.limits?.allowedPayees).toEqual([{ disclosed: [], undisclosed: 1 }]);
    expect(facts.limits?.constraints).toEqual(openPaymentExample.constraints);
    expect(facts.amount).toBeNull();
    expect(facts.payee).toBeNull();
    expect(facts.issuedAt).toBe(1777342357);
    expect(facts.expiresAt).toBe(1777345957);
  });

  it("extract the checkout hash of a checkout mandate as its transaction id", () => {
    const facts = parseAssessRequest({ mandate: copy(checkoutExample) }, null).facts;
    expect(facts.transactionId).toBe(checkoutExample.checkout_hash);
    expect(facts.amount).toBeNull();
    expect(facts.limits).toBeNull();
  });

  it("extract the holder key and the merchant allow-list of an open checkout mandate", () => {
    const facts = parseAssessRequest({ mandate: copy(openCheckoutExample) }, null).facts;
    expect(facts.holderKey).toEqual(openCheckoutExample.cnf.jwk);
    expect(facts.limits?.maxAmounts).toEqual([]);
    expect(facts.limits?.allowedPayees).toEqual([{ disclosed: [], undisclosed: 1 }]);
    expect(facts.limits?.constraints).toHaveLength(2);
  });
});

describe("the request envelope", () => {
  it.each([null, [], "mandate", 42])("rejects a body that is not an object (%j)", (body) => {
    expect(rejection(body)).toEqual({
      status: 400,
      body: { error: "invalid_request", details: [{ path: "", message: "must be a JSON object" }] },
    });
  });

  it("rejects a request without a mandate", () => {
    expect(rejection({ kind: "custom" })).toEqual({
      status: 400,
      body: { error: "invalid_request", details: [{ path: "mandate", message: "required" }] },
    });
  });

  it.each([[[]], ["a string"], [null], [7]])(
    "rejects a mandate that is not an object (%j)",
    (m) => {
      expect(rejection({ mandate: m })).toEqual({
        status: 400,
        body: {
          error: "invalid_request",
          details: [{ path: "mandate", message: "must be a JSON object" }],
        },
      });
    },
  );

  it("rejects an unknown kind", () => {
    const answer = rejection({ kind: "wire_transfer", mandate: {} });
    expect(answer.status).toBe(400);
    expect(answer.body.error).toBe("invalid_request");
    expect(paths({ kind: "wire_transfer", mandate: {} })).toEqual(["kind"]);
  });

  it("names every unknown top-level field, so a typo is caught", () => {
    const body = { mandate: copy(paymentExample), mandate_type: "payment", idempotencyKey: "k" };
    expect(rejection(body)).toEqual({
      status: 400,
      body: {
        error: "invalid_request",
        details: [
          { path: "mandate_type", message: "unknown field" },
          { path: "idempotencyKey", message: "unknown field" },
        ],
      },
    });
  });

  it("echoes a valid idempotency key", () => {
    const key = "order-42/attempt:1~".padEnd(255, "x");
    const parsed = parseAssessRequest(
      { mandate: copy(paymentExample), idempotency_key: key },
      null,
    );
    expect(parsed.idempotencyKey).toBe(key);
  });

  it.each([
    ["empty", ""],
    ["256 characters", "k".repeat(256)],
    ["a space", "order 42"],
    ["a newline", "order\n42"],
    ["non-ASCII", "commande-é"],
    ["a number", 42],
  ])("rejects an idempotency key with %s", (_, key) => {
    const body = { mandate: copy(paymentExample), idempotency_key: key };
    expect(rejection(body).status).toBe(400);
    expect(rejection(body).body.error).toBe("invalid_request");
    expect(paths(body)).toEqual(["idempotency_key"]);
  });
});

describe("the mandate type", () => {
  it("rejects an unknown vct as an unknown mandate type", () => {
    const mandate = withValue(paymentExample, "vct", "mandate.payment.2");
    expect(rejection({ mandate })).toEqual({
      status: 400,
      body: {
        error: "unknown_mandate_type",
        details: [
          {
            path: "mandate.vct",
            message:
              "must be one of mandate.payment.1, mandate.payment.open.1, mandate.checkout.1, mandate.checkout.open.1",
          },
        ],
      },
    });
  });

  it.each([["mandate.payment"], ["Mandate.Payment.1"], [1], [null]])(
    "matches vct exactly: %j is unknown",
    (vct) => {
      const mandate = withValue(paymentExample, "vct", vct);
      expect(rejection({ mandate }).body.error).toBe("unknown_mandate_type");
      expect(rejection({ mandate, mandateType: "payment" }).body.error).toBe(
        "unknown_mandate_type",
      );
    },
  );

  it("rejects an unknown mandateType", () => {
    expect(rejection({ mandate: copy(paymentExample), mandateType: "refund" })).toEqual({
      status: 400,
      body: {
        error: "unknown_mandate_type",
        details: [
          {
            path: "mandateType",
            message: "must be one of payment, open_payment, checkout, open_checkout",
          },
        ],
      },
    });
  });

  it("rejects a mandateType that contradicts vct", () => {
    expect(rejection({ mandate: copy(checkoutExample), mandateType: "payment" })).toEqual({
      status: 400,
      body: {
        error: "mandate_type_mismatch",
        details: [{ path: "mandateType", message: "is payment, but mandate.vct names checkout" }],
      },
    });
  });

  it("rejects a mandateType that is not a string as malformed", () => {
    const body = { mandate: copy(paymentExample), mandateType: 1 };
    expect(rejection(body).body.error).toBe("invalid_request");
    expect(paths(body)).toEqual(["mandateType"]);
  });

  it("validates a mandate without vct against the stated type, which requires vct", () => {
    const body = { mandate: without(openPaymentExample, "vct"), mandateType: "open_payment" };
    expect(rejection(body)).toEqual({
      status: 422,
      body: {
        error: "mandate_invalid",
        details: [
          { path: "mandate.vct", message: 'Invalid input: expected "mandate.payment.open.1"' },
        ],
      },
    });
  });

  it("validates a mandate with neither vct nor mandateType as a PaymentMandate", () => {
    expect(rejection({ mandate: without(paymentExample, "vct") })).toEqual({
      status: 422,
      body: {
        error: "mandate_invalid",
        details: [{ path: "mandate.vct", message: 'Invalid input: expected "mandate.payment.1"' }],
      },
    });
  });

  it.each(["message_send", "voice_call", "custom"])("rejects a mandateType for kind %s", (kind) => {
    expect(rejection({ kind, mandate: {}, mandateType: "payment" })).toEqual({
      status: 400,
      body: {
        error: "invalid_request",
        details: [{ path: "mandateType", message: "applies only to kind ap2_payment" }],
      },
    });
  });
});

describe("other action kinds", () => {
  it.each(["message_send", "voice_call", "custom"] as const)("accept any object as %s", (kind) => {
    const mandate = { anything: [1, { nested: true }], vct: "not-ap2" };
    const parsed = parseAssessRequest({ kind, mandate }, null);
    expect(parsed).toMatchObject({ kind, mandateType: null, mandate });
    expect(parsed.facts.amount).toBeNull();
  });

  it("read the recipient, channel and amount when present", () => {
    const mandate = {
      to: "+15551234567",
      channel: "sms",
      amount: { amount: 500, currency: "EUR" },
    };
    const facts = parseAssessRequest({ kind: "message_send", mandate }, null).facts;
    expect(facts).toMatchObject({
      recipient: "+15551234567",
      channel: "sms",
      amount: { amount: 500, currency: "EUR" },
      payee: null,
      limits: null,
    });
  });

  it("read an integer amount beside a top-level currency, and the first string recipient", () => {
    const mandate = { recipient: { id: 1 }, phone: "+15550000000", amount: 250, currency: "USD" };
    const facts = parseAssessRequest({ kind: "voice_call", mandate }, null).facts;
    expect(facts.recipient).toBe("+15550000000");
    expect(facts.amount).toEqual({ amount: 250, currency: "USD" });
  });

  it("ignore fields of the wrong type instead of guessing", () => {
    const mandate = { to: 5, channel: ["sms"], amount: "12.50", currency: "usd" };
    const facts = parseAssessRequest({ kind: "custom", mandate }, null).facts;
    expect(facts).toMatchObject({ recipient: null, channel: null, amount: null });
  });
});

const requiredFields: [keyof typeof examples, string][] = [
  ["payment", "vct"],
  ["payment", "transaction_id"],
  ["payment", "payee"],
  ["payment", "payee.id"],
  ["payment", "payee.name"],
  ["payment", "payment_amount"],
  ["payment", "payment_amount.amount"],
  ["payment", "payment_amount.currency"],
  ["payment", "payment_instrument"],
  ["payment", "payment_instrument.id"],
  ["payment", "payment_instrument.type"],
  ["open_payment", "vct"],
  ["open_payment", "constraints"],
  ["open_payment", "cnf"],
  ["open_payment", "cnf.jwk.kty"],
  ["open_payment", "constraints.0.type"],
  ["open_payment", "constraints.0.currency"],
  ["open_payment", "constraints.0.max"],
  ["open_payment", "constraints.1.allowed"],
  ["open_payment", "constraints.2.conditional_transaction_id"],
  ["checkout", "vct"],
  ["checkout", "checkout_hash"],
  ["open_checkout", "vct"],
  ["open_checkout", "constraints"],
  ["open_checkout", "cnf"],
  ["open_checkout", "constraints.0.items"],
  ["open_checkout", "constraints.0.items.0.id"],
  ["open_checkout", "constraints.0.items.0.acceptable_items"],
  ["open_checkout", "constraints.0.items.0.quantity"],
  ["open_checkout", "constraints.1.allowed"],
];

describe("schema validation (422 mandate_invalid)", () => {
  it.each(requiredFields)("a %s mandate without %s is rejected naming it", (type, path) => {
    const body = { mandate: without(examples[type], path), mandateType: type };
    const answer = rejection(body);
    expect(answer.status).toBe(422);
    expect(answer.body.error).toBe("mandate_invalid");
    expect(paths(body)).toEqual([`mandate.${path}`]);
  });

  it("requires checkout_jwt when the checkout mandate does not conceal it in _sd", () => {
    const mandate = without(checkoutExample, "_sd");
    expect(rejection({ mandate })).toEqual({
      status: 422,
      body: {
        error: "mandate_invalid",
        details: [
          {
            path: "mandate.checkout_jwt",
            message: "required unless selectively disclosed (a digest in _sd)",
          },
        ],
      },
    });
    const disclosed = { ...mandate, checkout_jwt: "eyJhbGciOiJFUzI1NiJ9.e30.c2ln" };
    expect(parseAssessRequest({ mandate: disclosed }, null).mandateType).toBe("checkout");
  });

  it("requires the open payment mandate to contain a payment.reference constraint", () => {
    const mandate = copy(openPaymentExample) as Json;
    mandate.constraints.pop();
    expect(rejection({ mandate })).toEqual({
      status: 422,
      body: {
        error: "mandate_invalid",
        details: [
          { path: "mandate.constraints", message: 'must contain a "payment.reference" constraint' },
        ],
      },
    });
  });

  it("requires the open checkout mandate to contain a checkout.line_items constraint", () => {
    const mandate = copy(openCheckoutExample) as Json;
    mandate.constraints.shift();
    expect(paths({ mandate })).toEqual(["mandate.constraints"]);
  });

  it("names each failing path when several fail", () => {
    const mandate = copy(paymentExample) as Json;
    mandate.payment_amount = { amount: "199.00", currency: "usd" };
    delete mandate.payee;
    mandate.payment_instrument.type = 4;
    expect(paths({ mandate })).toEqual([
      "mandate.payee",
      "mandate.payment_amount.amount",
      "mandate.payment_amount.currency",
      "mandate.payment_instrument.type",
    ]);
  });

  it.each([
    ["a string", "19900"],
    ["a float", 199.5],
    ["negative", -1],
    ["beyond the safe integers", 2 ** 53],
  ])("rejects an amount that is %s", (_, amount) => {
    const mandate = withValue(paymentExample, "payment_amount.amount", amount);
    expect(rejection({ mandate }).status).toBe(422);
    expect(paths({ mandate })).toEqual(["mandate.payment_amount.amount"]);
  });

  it.each(["usd", "US", "USDT", "U$D", 840])("rejects the currency %j", (currency) => {
    const mandate = withValue(paymentExample, "payment_amount.currency", currency);
    expect(rejection({ mandate }).status).toBe(422);
    expect(paths({ mandate })).toEqual(["mandate.payment_amount.currency"]);
  });

  it("accepts a zero amount", () => {
    const mandate = withValue(paymentExample, "payment_amount.amount", 0);
    expect(parseAssessRequest({ mandate }, null).facts.amount).toEqual({
      amount: 0,
      currency: "USD",
    });
  });

  it("rejects a currency in a constraint that is not ISO 4217", () => {
    const mandate = withValue(openPaymentExample, "constraints.0.currency", "dollars");
    expect(paths({ mandate })).toEqual(["mandate.constraints.0.currency"]);
  });

  it("rejects risk_data that is not an object", () => {
    const mandate = withValue(paymentExample, "risk_data", ["device-fingerprint"]);
    expect(paths({ mandate })).toEqual(["mandate.risk_data"]);
  });

  it("rejects an unknown constraint type at its type", () => {
    const mandate = withValue(openPaymentExample, "constraints.0.type", "payment.cashback");
    expect(paths({ mandate })).toEqual(["mandate.constraints.0.type"]);
  });

  it("rejects a line item requirement of quantity 0 and an empty line item list", () => {
    const zero = withValue(openCheckoutExample, "constraints.0.items.0.quantity", 0);
    expect(paths({ mandate: zero })).toEqual(["mandate.constraints.0.items.0.quantity"]);
    const empty = withValue(openCheckoutExample, "constraints.0.items", []);
    expect(paths({ mandate: empty })).toEqual(["mandate.constraints.0.items"]);
  });

  it("rejects iat and exp that are not integers", () => {
    const mandate = withValue(openPaymentExample, "exp", "2026-04-28T00:00:00Z");
    expect(paths({ mandate })).toEqual(["mandate.exp"]);
  });
});

describe("additional AP2 fields and selective disclosure", () => {
  it("allow unknown fields at every level of an AP2 mandate", () => {
    const mandate = copy(paymentExample) as Json;
    mandate.iss = "https://wallet.example";
    mandate._sd_alg = "sha-256";
    mandate.payee.mcc = "5732";
    mandate.payment_amount.display = "$199.00";
    mandate.payment_instrument.network = "visa";
    mandate.risk_data = { device: { ip: "203.0.113.7" }, session_age_s: 120 };
    mandate.pisp = {
      legal_name: "PISP Ltd",
      brand_name: "PayIt",
      domain_name: "payit.example",
      country: "GB",
    };
    const parsed = parseAssessRequest({ mandate }, null);
    expect(parsed.mandate).toBe(mandate);
    expect(parsed.facts.riskData).toEqual(mandate.risk_data);
  });

  it("allow unknown fields inside constraints", () => {
    const mandate = withValue(openPaymentExample, "constraints.0.note", "per payment");
    expect(parseAssessRequest({ mandate }, null).mandateType).toBe("open_payment");
  });

  it("read disclosed entries of an allow-list and count the undisclosed ones", () => {
    const mandate = withValue(openPaymentExample, "constraints.1.allowed", [
      { "...": "oEH7i1gyb-zn6awwjy57LvzxkQDfD-8tvlC2XuIkgOA" },
      { id: "merchant_1", name: "Demo Merchant" },
    ]);
    const facts = parseAssessRequest({ mandate }, null).facts;
    expect(facts.limits?.allowedPayees).toEqual([
      { disclosed: [{ id: "merchant_1", name: "Demo Merchant", website: null }], undisclosed: 1 },
    ]);
  });

  it("name the failing field of a disclosed entry of an allow-list", () => {
    const mandate = withValue(openPaymentExample, "constraints.1.allowed.0", { id: 1, name: "M" });
    expect(paths({ mandate })).toEqual(["mandate.constraints.1.allowed.0.id"]);
  });

  it("reject a malformed undisclosed element", () => {
    const digestless = withValue(openCheckoutExample, "constraints.0.items.0.acceptable_items.0", {
      "...": 42,
    });
    expect(paths({ mandate: digestless })).toEqual([
      "mandate.constraints.0.items.0.acceptable_items.0....",
    ]);
    const extra = withValue(openPaymentExample, "constraints.1.allowed.0.id", "merchant_1");
    expect(rejection({ mandate: extra })).toEqual({
      status: 422,
      body: {
        error: "mandate_invalid",
        details: [{ path: "mandate.constraints.1.allowed.0.id", message: "unknown field" }],
      },
    });
  });

  it("reject an undisclosed element where the schema does not allow selective disclosure", () => {
    const mandate = copy(openPaymentExample) as Json;
    mandate.constraints.push({ type: "payment.allowed_pisps", allowed: [{ "...": "abc" }] });
    expect(paths({ mandate })).toEqual([
      "mandate.constraints.3.allowed.0.legal_name",
      "mandate.constraints.3.allowed.0.brand_name",
      "mandate.constraints.3.allowed.0.domain_name",
    ]);
  });
});

describe("the holder key (cnf.jwk)", () => {
  it("is closed: a private key part is rejected as an unknown field", () => {
    const mandate = withValue(openPaymentExample, "cnf.jwk.d", "c2VjcmV0");
    expect(rejection({ mandate })).toEqual({
      status: 422,
      body: {
        error: "mandate_invalid",
        details: [{ path: "mandate.cnf.jwk.d", message: "unknown field" }],
      },
    });
  });

  it.each([
    ["kty", "OKP"],
    ["crv", "P-384"],
    ["alg", "EdDSA"],
    ["x", "short"],
  ])("must be an EC P-256 key: %s %j is rejected", (field, value) => {
    const mandate = withValue(openCheckoutExample, `cnf.jwk.${field}`, value);
    expect(paths({ mandate })).toEqual([`mandate.cnf.jwk.${field}`]);
  });

  it("may be absent when cnf binds the key another way", () => {
    const mandate = withValue(openPaymentExample, "cnf", { kid: "holder-key-1" });
    expect(parseAssessRequest({ mandate }, null).facts.holderKey).toBeNull();
  });
});

describe("A2A binding", () => {
  const mandate = () => copy(paymentExample);

  it("is not engaged without header or block", () => {
    expect(parseAssessRequest({ mandate: mandate() }, null).a2a).toBeNull();
  });

  it.each(["", "  "])("is not engaged by an empty A2A-Version header (%j)", (header) => {
    expect(parseAssessRequest({ mandate: mandate() }, header).a2a).toBeNull();
  });

  it.each([
    ["0.3", "0.3"],
    ["1.0", "1.0"],
    ["0.3.0", "0.3"],
    ["1.0.2", "1.0"],
  ])("is engaged by the header %s, as version %s", (header, version) => {
    expect(parseAssessRequest({ mandate: mandate() }, header).a2a).toEqual({
      version,
      task_id: null,
      context_id: null,
      agent_card_ref: null,
    });
  });

  it("is engaged by a block, and binds its task, context and agent card", () => {
    const a2a = {
      task_id: "task-1",
      context_id: "ctx-1",
      agent_card_ref: "https://merchant.example/.well-known/agent-card.json",
      a2a_version: "1.0",
    };
    expect(parseAssessRequest({ mandate: mandate(), a2a }, null).a2a).toEqual({
      version: "1.0",
      task_id: "task-1",
      context_id: "ctx-1",
      agent_card_ref: "https://merchant.example/.well-known/agent-card.json",
    });
  });

  it("defaults to 0.3 for a block without version and without header", () => {
    expect(parseAssessRequest({ mandate: mandate(), a2a: {} }, null).a2a?.version).toBe("0.3");
    expect(parseAssessRequest({ mandate: mandate(), a2a: {} }, "").a2a?.version).toBe("0.3");
  });

  it("takes the header's version for a block without one", () => {
    const a2a = { task_id: "t" };
    expect(parseAssessRequest({ mandate: mandate(), a2a }, "1.0").a2a?.version).toBe("1.0");
  });

  it("accepts header and block that agree up to a patch part", () => {
    const a2a = { a2a_version: "1.0.0" };
    expect(parseAssessRequest({ mandate: mandate(), a2a }, "1.0").a2a?.version).toBe("1.0");
  });

  it("takes the block's version when the header is empty", () => {
    const a2a = { a2a_version: "1.0" };
    expect(parseAssessRequest({ mandate: mandate(), a2a }, "").a2a?.version).toBe("1.0");
  });

  it("rejects header and block that disagree", () => {
    expect(rejection({ mandate: mandate(), a2a: { a2a_version: "0.3" } }, "1.0")).toEqual({
      status: 400,
      body: {
        error: "a2a_version_mismatch",
        details: [
          { path: "a2a.a2a_version", message: "is 0.3, but the A2A-Version header says 1.0" },
        ],
      },
    });
  });

  it.each(["2.0", "0.2", "1", "v1.0", "01.0", "1.0-rc1", "latest"])(
    "rejects the unsupported header version %j",
    (header) => {
      expect(rejection({ mandate: mandate() }, header)).toEqual({
        status: 400,
        body: {
          error: "unsupported_a2a_version",
          details: [{ path: "a2a-version", message: "must be one of 0.3, 1.0 (Major.Minor)" }],
        },
      });
    },
  );

  it("rejects an unsupported block version", () => {
    expect(rejection({ mandate: mandate(), a2a: { a2a_version: "0.2" } })).toEqual({
      status: 400,
      body: {
        error: "unsupported_a2a_version",
        details: [{ path: "a2a.a2a_version", message: "must be one of 0.3, 1.0 (Major.Minor)" }],
      },
    });
  });

  it("answers an A2A problem before a mandate problem", () => {
    const body = { mandate: without(paymentExample, "payee"), a2a: { a2a_version: "9.9" } };
    expect(rejection(body).body.error).toBe("unsupported_a2a_version");
  });

  it.each([
    ["an unknown field", { taskId: "t" }, "a2a.taskId"],
    ["an empty task id", { task_id: "" }, "a2a.task_id"],
    ["a task id of 257 characters", { task_id: "t".repeat(257) }, "a2a.task_id"],
    ["a control character", { context_id: "ctx\u0000" }, "a2a.context_id"],
    ["a lone surrogate", { task_id: "t\ud800" }, "a2a.task_id"],
    ["a number", { context_id: 7 }, "a2a.context_id"],
    [
      "an agent card ref of 2049 characters",
      { agent_card_ref: "r".repeat(2049) },
      "a2a.agent_card_ref",
    ],
    ["a version of 17 characters", { a2a_version: "1".repeat(17) }, "a2a.a2a_version"],
  ])("rejects a block with %s as malformed", (_, a2a, path) => {
    const body = { mandate: mandate(), a2a };
    expect(rejection(body).body.error).toBe("invalid_request");
    expect(paths(body)).toEqual([path]);
  });

  it("rejects a block that is not an object", () => {
    const body = { mandate: mandate(), a2a: "1.0" };
    expect(rejection(body).body.error).toBe("invalid_request");
    expect(paths(body)).toEqual(["a2a"]);
  });
});

describe("mandateCanonicalHash", () => {
  const request = (mandate: Json, kind = "ap2_payment" as const) => ({
    kind,
    mandateType: "payment" as const,
    mandate,
  });

  async function sha256Hex(text: string): Promise<string> {
    const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
    return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
  }

  it("is the hex SHA-256 of the RFC 8785 form of kind, mandateType and mandate", async () => {
    const canonical =
      '{"kind":"ap2_payment","mandate":{"payee":{"id":"merchant_1","name":"Demo Merchant",' +
      '"website":"https://demo-merchant.example"},"payment_amount":{"amount":19900,"currency":"USD"},' +
      '"payment_instrument":{"description":"Card ••••4242","id":"stub","type":"card"},' +
      '"transaction_id":"NivWhuqfzcvZNapvIEJ2-3tsdQLkiuIcye2g46WVgX8","vct":"mandate.payment.1"},' +
      '"mandateType":"payment"}';
    expect(
      canonicalize({ kind: "ap2_payment", mandateType: "payment", mandate: paymentExample }),
    ).toBe(canonical);
    expect(mandateCanonicalHash(request(copy(paymentExample)))).toBe(await sha256Hex(canonical));
  });

  it("equals the hash of the parsed request", () => {
    const parsed = parseAssessRequest({ mandate: copy(paymentExample) }, "1.0");
    expect(mandateCanonicalHash(parsed)).toBe(mandateCanonicalHash(request(copy(paymentExample))));
  });

  it("does not depend on key order", () => {
    const reordered = Object.fromEntries(Object.entries(copy(paymentExample)).reverse());
    expect(mandateCanonicalHash(request(reordered))).toBe(
      mandateCanonicalHash(request(copy(paymentExample))),
    );
  });

  it("changes with the mandate's content and with the kind", () => {
    const base = mandateCanonicalHash(request(copy(paymentExample)));
    const other = withValue(paymentExample, "payment_amount.amount", 19901);
    expect(mandateCanonicalHash(request(other))).not.toBe(base);
    const asCustom = { kind: "custom" as const, mandateType: null, mandate: copy(paymentExample) };
    expect(mandateCanonicalHash(asCustom)).not.toBe(base);
  });

  it("ignores the service's own risk_data namespace, so a forwarded mandate hashes as sent", () => {
    const sent = copy(paymentExample);
    const returned = { ...copy(paymentExample), risk_data: { "agent-risk": "eyJ.payload.sig" } };
    expect(mandateCanonicalHash(request(returned))).toBe(mandateCanonicalHash(request(sent)));

    const withSignals = { ...copy(paymentExample), risk_data: { device: "d1" } };
    const withSignalsReturned = {
      ...copy(paymentExample),
      risk_data: { device: "d1", "agent-risk": "eyJ.payload.sig" },
    };
    expect(mandateCanonicalHash(request(withSignalsReturned))).toBe(
      mandateCanonicalHash(request(withSignals)),
    );
    expect(mandateCanonicalHash(request(withSignals))).not.toBe(
      mandateCanonicalHash(request(sent)),
    );
  });

  it("does not read the service's namespace back as a client risk signal", () => {
    const mandate = {
      ...copy(paymentExample),
      risk_data: { device: "d1", "agent-risk": "forged" },
    };
    const parsed = parseAssessRequest({ mandate }, null);
    expect(parsed.facts.riskData).toEqual({ device: "d1" });
    expect(parsed.mandate.risk_data).toEqual({ device: "d1", "agent-risk": "forged" });
  });
});
