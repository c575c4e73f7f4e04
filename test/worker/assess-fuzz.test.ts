import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import {
  DECISIONS,
  examples,
  fetchWith,
  type Json,
  jcs,
  jwks,
  KINDS,
  MANDATE_TYPES,
  orgWithKey,
  RISK_LEVELS,
  sha256Hex,
  withoutOurNamespace,
} from "./support/assess";
import { verifyJws } from "./support/jws";

// Generated requests against POST /v1/assess. The contract (spec, Errors): a 4xx is a request
// problem, a 5xx means the service could not complete the request. So no generated request
// may ever produce a 5xx; an invalid one is always a 4xx; a valid one is a 200 whose decision
// is in the enum. Each property sends its requests in concurrent batches of BATCH.

const BATCH = 10;
/** Shrinking resends whole batches: bound the time a property (and its shrinking) may take. */
const LIMITS = { interruptAfterTimeLimit: 90_000, endOnFailure: false };
const TIMEOUT = 120_000;

let key: string;
let keys: Awaited<ReturnType<typeof jwks>>;

beforeAll(async () => {
  ({ key } = await orgWithKey());
  keys = await jwks();
});

interface Sent {
  text: string;
  headers?: Record<string, string>;
}

/**
 * Straight into the Worker's fetch handler, as the runtime calls it. (Through SELF.fetch every
 * call gets slower the more calls the file has made: with @cloudflare/vitest-pool-workers
 * 0.15.1, 800 calls of /health take 0.4 s for the first hundred and 16 s for the eighth.)
 */
async function send({ text, headers = {} }: Sent) {
  return fetchWith({}, "/v1/assess", {
    method: "POST",
    headers: { "x-api-key": key, "content-type": "application/json", ...headers },
    body: text,
  });
}

function describeRequest(sent: Sent) {
  const text = sent.text.length > 600 ? `${sent.text.slice(0, 600)}…` : sent.text;
  return `${JSON.stringify(sent.headers ?? {})} ${text}`;
}

/** Checks a 200 body the way a client relies on it. */
function expectDecision(body: Json) {
  expect(DECISIONS).toContain(body.decision);
  expect(Number.isInteger(body.score)).toBe(true);
  expect(body.score).toBeGreaterThanOrEqual(0);
  expect(body.score).toBeLessThanOrEqual(100);
  expect(body.outcome.outcome.decision).toBe(body.decision);
  expect(body.outcome.outcome.risk_score).toBe(body.score);
  expect(RISK_LEVELS).toContain(body.outcome.outcome.risk_level);
  expect(body.riskPayloadJws).toBe(body.outcome.risk_payload.jws);
}

// --- Generators ---

/** Any code point but NUL and the surrogates: what a JSON string can carry faithfully. */
const safeChar = fc
  .integer({ min: 1, max: 0x10ffff })
  .filter((cp) => cp < 0xd800 || cp > 0xdfff)
  .map((cp) => String.fromCodePoint(cp));
const printable = fc.string({ unit: "grapheme", maxLength: 24 });
const anyText = fc.oneof(
  fc.string({ unit: safeChar, maxLength: 24 }),
  printable,
  fc.string({ maxLength: 24 }).map((s) => s.replaceAll("\u0000", "")),
);
const nonEmptyText = anyText.filter((s) => s.length > 0);
const safeJson = fc.jsonValue({ maxDepth: 4, stringUnit: safeChar });
const safeObject = fc.dictionary(anyText, safeJson, { maxKeys: 6 });
const currency = fc.stringMatching(/^[A-Z]{3}$/);
const amount = fc.oneof(
  fc.nat(1_000_000),
  fc.maxSafeNat(),
  fc.constantFrom(0, 1, Number.MAX_SAFE_INTEGER),
);
/** Extra fields an AP2 mandate may carry (additional AP2 fields are allowed). */
const extras = fc.dictionary(
  anyText.map((k) => `x-${k}`),
  safeJson,
  { maxKeys: 3 },
);

/** A payment mandate valid under the spec's PaymentMandate table. */
const validPayment = fc
  .record(
    {
      transaction_id: nonEmptyText,
      payee: fc.record(
        { id: anyText, name: anyText, website: anyText, mcc: anyText },
        { requiredKeys: ["id", "name"] },
      ),
      payment_amount: fc.record({ amount, currency }),
      payment_instrument: fc.record(
        { id: anyText, type: anyText, description: anyText },
        { requiredKeys: ["id", "type"] },
      ),
      execution_date: fc
        .date({
          min: new Date(Date.now() - 86_400_000),
          max: new Date(Date.now() + 30 * 86_400_000),
          noInvalidDate: true,
        })
        .map((d) => d.toISOString()),
      // Non-empty: an empty risk_data is a known bug (assess.test.ts, "an empty risk_data").
      risk_data: fc.oneof(
        fc.dictionary(anyText, safeJson, { minKeys: 1, maxKeys: 6 }),
        fc.record({ country: fc.stringMatching(/^[A-Z]{2}$/), device: anyText }),
      ),
    },
    {
      requiredKeys: ["transaction_id", "payee", "payment_amount", "payment_instrument"],
    },
  )
  .chain((m) => extras.map((x) => ({ vct: "mandate.payment.1", ...x, ...m }) as Json));

const validExample = fc.constantFrom(...MANDATE_TYPES).map((t) => examples[t]());

// --- Mutations that make a valid payment request invalid, each with its status ---

type Mutation = (body: Json) => { sent: Sent; status: number[] };

const required = [
  "transaction_id",
  "payee",
  "payment_amount",
  "payment_amount.amount",
  "payment_amount.currency",
  "payment_instrument",
  "payee.id",
  "payee.name",
  "payment_instrument.id",
  "payment_instrument.type",
] as const;

function at(object: Json, path: string): [Json, string] {
  const parts = path.split(".");
  const last = parts.pop()!;
  let target = object;
  for (const p of parts) target = target[p];
  return [target, last];
}

const plain = (body: Json): Sent => ({ text: JSON.stringify(body) });

/** A value of the wrong type for the path. */
function wrongFor(path: string) {
  const any = fc.oneof(
    fc.integer(),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.boolean(),
    fc.constant(null),
    fc.array(fc.integer(), { maxLength: 2 }),
    fc.constant({}),
    anyText,
  );
  if (path === "payment_amount.amount") {
    return fc.oneof(
      fc.integer({ min: -1_000_000, max: -1 }),
      fc.double({ min: 0.001, max: 1e6, noNaN: true }).filter((d) => !Number.isInteger(d)),
      fc.constantFrom(2 ** 53, 2 ** 60, 1e300, Number.MAX_VALUE, -0.5),
      anyText,
      fc.constant(null),
      fc.boolean(),
    );
  }
  if (path === "payment_amount.currency") {
    return fc.oneof(
      anyText.filter((s) => !/^[A-Z]{3}$/.test(s)),
      fc.integer(),
      fc.constant(null),
    );
  }
  if (path === "payee" || path === "payment_amount" || path === "payment_instrument") {
    return any.filter((v) => v === null || typeof v !== "object" || Array.isArray(v));
  }
  return any.filter((v) => typeof v !== "string");
}

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  // A required field missing: 422.
  fc.constantFrom(...required).map((path) => (body: Json) => {
    const [target, last] = at(body.mandate, path);
    delete target[last];
    return { sent: plain(body), status: [422] };
  }),
  // A required field of the wrong type: 422.
  fc
    .constantFrom(...required)
    .chain((path) => wrongFor(path).map((value) => ({ path, value })))
    .map(({ path, value }) => (body: Json) => {
      const [target, last] = at(body.mandate, path);
      target[last] = value;
      return { sent: plain(body), status: [422] };
    }),
  // A NUL character in a value or a key: 400.
  fc.tuple(anyText, anyText, fc.boolean()).map(([a, b, inKey]) => (body: Json) => {
    if (inKey) body.mandate[`${a}\u0000${b}`] = 1;
    else body.mandate.payee.name = `${a}\u0000${b}`;
    return { sent: plain(body), status: [400] };
  }),
  // A lone surrogate: 400.
  fc.tuple(fc.integer({ min: 0xd800, max: 0xdfff }), anyText).map(([cp, s]) => (body: Json) => {
    body.mandate.transaction_id = `${s}${String.fromCharCode(cp)}`;
    return { sent: plain(body), status: [400] };
  }),
  // Nesting far deeper than 32 levels: 400.
  fc.integer({ min: 40, max: 400 }).map((depth) => (body: Json) => {
    let deep: Json = { leaf: true };
    for (let i = 0; i < depth; i++) deep = { d: deep };
    body.mandate.x_deep = deep;
    return { sent: plain(body), status: [400] };
  }),
  // A number beyond a double: 400.
  fc.constantFrom("1e400", "-1e400", "1e999999", "123e4567").map((raw) => (body: Json) => {
    body.mandate.x_big = "__RAW__";
    return { sent: { text: JSON.stringify(body).replace('"__RAW__"', raw) }, status: [400] };
  }),
  // An unknown top-level field: 400. (`__proto__` is no field: assigning 1 to it sets nothing,
  // so the body would go out unchanged.)
  anyText
    .filter(
      (k) =>
        ![
          "mandate",
          "kind",
          "mandateType",
          "a2a",
          "idempotency_key",
          "agent_id",
          "__proto__",
        ].includes(k),
    )
    .map((k) => (body: Json) => {
      body[k] = 1;
      return { sent: plain(body), status: [400] };
    }),
  // An unknown vct: 400.
  fc
    .oneof(anyText, fc.constantFrom("mandate.unknown.1", "mandate.payment.2", "Mandate.Payment.1"))
    .filter(
      (v) =>
        ![
          "mandate.payment.1",
          "mandate.payment.open.1",
          "mandate.checkout.1",
          "mandate.checkout.open.1",
        ].includes(v),
    )
    .map((vct) => (body: Json) => {
      body.mandate.vct = vct;
      return { sent: plain(body), status: [400] };
    }),
  // An unknown mandateType: 400.
  anyText
    .filter((t) => !(MANDATE_TYPES as readonly string[]).includes(t))
    .map((t) => (body: Json) => {
      body.mandateType = t;
      return { sent: plain(body), status: [400] };
    }),
  // A mandateType contradicting vct: 400.
  fc.constantFrom("open_payment", "checkout", "open_checkout").map((t) => (body: Json) => {
    body.mandateType = t;
    return { sent: plain(body), status: [400] };
  }),
  // A mandateType on a non-AP2 kind: 400.
  fc.constantFrom("message_send", "voice_call", "custom").map((kind) => (body: Json) => {
    body.kind = kind;
    body.mandateType = "payment";
    return { sent: plain(body), status: [400] };
  }),
  // An unknown kind: 400.
  anyText
    .filter((k) => !(KINDS as readonly string[]).includes(k))
    .map((kind) => (body: Json) => {
      body.kind = kind;
      return { sent: plain(body), status: [400] };
    }),
  // An unsupported A2A version, in the header or the block: 400.
  fc
    .tuple(
      fc.oneof(
        fc.constantFrom("2.0", "0.2", "1", "v1.0", "latest", "1.1"),
        fc.stringMatching(/^[a-z0-9.]{1,8}$/),
      ),
      fc.boolean(),
    )
    .filter(([v]) => !/^(0\.3|1\.0)(\.\d+)?$/.test(v))
    .map(([version, inHeader]) => (body: Json) => {
      if (inHeader)
        return { sent: { ...plain(body), headers: { "A2A-Version": version } }, status: [400] };
      body.a2a = { a2a_version: version };
      return { sent: plain(body), status: [400] };
    }),
  // Header and block disagreeing: 400.
  fc.boolean().map((flip) => (body: Json) => {
    body.a2a = { a2a_version: flip ? "0.3" : "1.0" };
    return {
      sent: { ...plain(body), headers: { "A2A-Version": flip ? "1.0" : "0.3" } },
      status: [400],
    };
  }),
  // An ill-typed a2a block or idempotency key: 400.
  fc
    .oneof(
      fc.record({ a2a: fc.oneof(anyText, fc.integer(), fc.array(fc.integer())) }),
      fc.record({ a2a: fc.record({ task_id: fc.oneof(fc.integer(), fc.boolean()) }) }),
      fc.record({
        idempotency_key: fc.oneof(
          fc.integer(),
          fc.constant(""),
          fc.string({ minLength: 256, maxLength: 300 }),
        ),
      }),
    )
    .map((patch) => (body: Json) => {
      Object.assign(body, patch);
      return { sent: plain(body), status: [400] };
    }),
  // A body that is not an object, or not JSON: 400.
  fc
    .oneof(
      fc
        .jsonValue({ maxDepth: 2 })
        .filter((v) => v === null || typeof v !== "object" || Array.isArray(v))
        .map((v) => JSON.stringify(v)),
      fc.constantFrom("{", "[", '{"mandate":', "nul", "{'a':1}", "\u0000"),
    )
    .map((text) => () => ({ sent: { text }, status: [400] })),
  // A body over 256 KiB: 413.
  fc.integer({ min: 257, max: 400 }).map((kib) => (body: Json) => {
    body.mandate.x_filler = "x".repeat(kib * 1024);
    return { sent: plain(body), status: [413] };
  }),
);

// --- Chaos: anything in any slot ---

const chaosBody = fc.record(
  {
    mandate: fc.oneof(validPayment, validExample, safeObject, safeJson, fc.constant(undefined)),
    kind: fc.oneof(fc.constantFrom(...KINDS), anyText, fc.integer()),
    mandateType: fc.oneof(fc.constantFrom(...MANDATE_TYPES), anyText, fc.constant(null)),
    a2a: fc.oneof(
      fc.record(
        {
          task_id: anyText,
          context_id: anyText,
          agent_card_ref: anyText,
          a2a_version: fc.constantFrom("0.3", "1.0", "0.3.0", "2.0", ""),
        },
        { requiredKeys: [] },
      ),
      safeJson,
    ),
    idempotency_key: fc.oneof(fc.stringMatching(/^[!-~]{1,40}$/), anyText),
    agent_id: fc.oneof(fc.uuid(), anyText),
  },
  { requiredKeys: [] },
);

const chaos = fc.record({
  body: chaosBody,
  header: fc.option(fc.constantFrom("0.3", "1.0", "2.0", "", "0.3.1", "garbage"), {
    nil: undefined,
  }),
});

describe("POST /v1/assess under generated requests", () => {
  it(
    "valid payment mandates: 200, a decision in the enum, a verifiable payload binding the mandate",
    async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.array(validPayment, { minLength: BATCH, maxLength: BATCH }),
          async (mandates) => {
            const answers = await Promise.all(
              mandates.map((mandate) => send({ text: JSON.stringify({ mandate }) })),
            );
            for (const [i, res] of answers.entries()) {
              const sent = JSON.parse(JSON.stringify(mandates[i]));
              expect(
                res.status,
                `${res.text}\n${describeRequest({ text: JSON.stringify(sent) })}`,
              ).toBe(200);
              expectDecision(res.json);
              const verified = await verifyJws(res.json.riskPayloadJws, keys);
              expect(verified.valid).toBe(true);
              const claims = JSON.parse(verified.payload);
              expect(claims.mandate_hash).toBe(`sha256:${await sha256Hex(jcs(sent))}`);
              expect(withoutOurNamespace(res.json.mandate)).toEqual(sent);
            }
            // Forwarded back, the returned mandate is the same request (docs/assess.md).
            const resent = await Promise.all(
              answers
                .slice(0, 3)
                .map((res) => send({ text: JSON.stringify({ mandate: res.json.mandate }) })),
            );
            for (const [i, res] of resent.entries()) {
              expect(res.status).toBe(200);
              expect(res.json.assessmentId).toBe(answers[i]!.json.assessmentId);
            }
          },
        ),
        { ...LIMITS, numRuns: 60 },
      );
    },
    TIMEOUT,
  );

  it(
    "invalid requests: always the 4xx their fault calls for, never a 5xx",
    async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.array(fc.tuple(validPayment, mutation), { minLength: BATCH, maxLength: BATCH }),
          async (cases) => {
            const prepared = cases.map(([mandate, mutate]) =>
              mutate({ mandate: structuredClone(mandate) }),
            );
            const answers = await Promise.all(prepared.map((p) => send(p.sent)));
            for (const [i, res] of answers.entries()) {
              const { sent, status } = prepared[i]!;
              expect(
                status,
                `${res.status} ${res.text.slice(0, 300)}\n${describeRequest(sent)}`,
              ).toContain(res.status);
              expect(typeof res.json?.error).toBe("string");
            }
          },
        ),
        { ...LIMITS, numRuns: 150 },
      );
    },
    TIMEOUT,
  );

  it(
    "anything in any slot: never a 5xx; a 200 carries a decision in the enum",
    async () => {
      await fc.assert(
        fc.asyncProperty(fc.array(chaos, { minLength: BATCH, maxLength: BATCH }), async (cases) => {
          const sent = cases.map(({ body, header }): Sent => {
            const headers: Record<string, string> = {};
            if (header !== undefined) headers["A2A-Version"] = header;
            return { text: JSON.stringify(body), headers };
          });
          const answers = await Promise.all(sent.map((s) => send(s)));
          for (const [i, res] of answers.entries()) {
            const label = `${res.status} ${res.text.slice(0, 300)}\n${describeRequest(sent[i]!)}`;
            expect([200, 400, 422], label).toContain(res.status);
            if (res.status === 200) expectDecision(res.json);
            else expect(typeof res.json?.error, label).toBe("string");
          }
        }),
        { ...LIMITS, numRuns: 150 },
      );
    },
    TIMEOUT,
  );

  it(
    "other kinds accept any object, stored faithfully and hashed canonically",
    async () => {
      const deep = fc.integer({ min: 1, max: 20 }).map((depth) => {
        let value: Json = { leaf: "x" };
        for (let i = 0; i < depth; i++) value = { d: value };
        return value;
      });
      const mandate = fc.oneof(
        safeObject,
        deep,
        fc.record({ to: anyText, body: anyText, risk_data: safeJson }),
      );
      await fc.assert(
        fc.asyncProperty(
          fc.array(fc.tuple(fc.constantFrom("message_send", "voice_call", "custom"), mandate), {
            minLength: BATCH,
            maxLength: BATCH,
          }),
          async (cases) => {
            const answers = await Promise.all(
              cases.map(([kind, m]) => send({ text: JSON.stringify({ kind, mandate: m }) })),
            );
            for (const [i, res] of answers.entries()) {
              const [kind, m] = cases[i]!;
              const sent = asAuthored(JSON.parse(JSON.stringify(m)));
              const label = `${res.status} ${res.text.slice(0, 300)}\n${JSON.stringify({ kind, mandate: sent }).slice(0, 600)}`;
              expect(res.status, label).toBe(200);
              expectDecision(res.json);
              expect(res.json.outcome.kind).toBe(kind);
              const claims = JSON.parse((await verifyJws(res.json.riskPayloadJws, keys)).payload);
              expect(claims.mandate_hash, label).toBe(`sha256:${await sha256Hex(jcs(sent))}`);
            }
            // Read back a few: the stored mandate is the one submitted.
            for (const res of answers.slice(0, 3)) {
              const i = answers.indexOf(res);
              const stored = await fetchWith({}, `/v1/mandates/${res.json.mandateId}`, {
                headers: { "x-api-key": key },
              });
              expect(stored.status).toBe(200);
              expect(stored.json.mandate).toEqual(
                asAuthored(JSON.parse(JSON.stringify(cases[i]![1]))),
              );
            }
          },
        ),
        { ...LIMITS, numRuns: 40 },
      );
    },
    TIMEOUT,
  );
});

/** docs/assess.md: an empty `risk_data` object counts as none (neither hashed nor stored). */
function asAuthored(mandate: Record<string, unknown>) {
  const { risk_data: riskData, ...rest } = mandate;
  const empty =
    typeof riskData === "object" &&
    riskData !== null &&
    !Array.isArray(riskData) &&
    Object.keys(riskData).length === 0;
  return empty ? rest : mandate;
}
