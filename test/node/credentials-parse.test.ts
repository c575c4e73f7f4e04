import { readFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  CHAIN_LIMITS,
  ChainMalformed,
  type ParsedChain,
  parseChain,
} from "../../src/ap2-credentials/chain";
import { CREDENTIAL_FAILURES } from "../../src/ap2-credentials/failures";
import { type ChainVerdict, verifyChain } from "../../src/ap2-credentials/verify";
import {
  b64url,
  buildChain,
  CHECKOUT_JWT,
  closedPayment,
  newSigner,
  openPayment,
  verifyBuilt,
} from "../support/ap2-chains";

// Whatever arrives as a credential, the parser answers a chain or ChainMalformed (the service's
// 422), and the verifier answers a verdict: never another exception (a 500).

const DIR = join(import.meta.dirname, "../fixtures/ap2-v0.2-vectors");
const fixture = (name: string) => JSON.parse(readFileSync(join(DIR, `${name}.json`), "utf8"));
const threeHop = fixture("payment_valid_three_hop");
const basic = fixture("payment_valid_basic");

function parseOrMalformed(credential: string): ParsedChain | null {
  try {
    return parseChain(credential);
  } catch (error) {
    // Plain checks, not expect(): this runs thousands of times per property.
    if (!(error instanceof ChainMalformed) || error.details.length === 0) throw error;
    return null;
  }
}

function expectWellFormed(verdict: ChainVerdict) {
  if (verdict.verified) {
    expect(verdict.failure).toBeNull();
  } else if (verdict.failure === null) {
    expect(verdict.vctKnown).toBe(false);
  } else {
    expect(CREDENTIAL_FAILURES).toContain(verdict.failure);
  }
}

async function verifyAny(credential: string, f = threeHop) {
  const chain = parseOrMalformed(credential);
  if (!chain) return null;
  const verdict = await verifyChain(chain, {
    anchors: {
      keys: f.trusted_keys.map((k: { role: string; jwk: object }) => ({
        issuerId: k.role,
        jwk: k.jwk,
      })),
    },
    presentation: { aud: f.expected_aud, nonce: f.expected_nonce },
    now: f.verify_params.current_time,
  });
  expectWellFormed(verdict);
  return verdict;
}

const wireChar = fc.constantFrom(..."~.-_AZaz09~~~.".split(""));

describe("parseChain", () => {
  it("answers a chain or ChainMalformed for arbitrary strings", () => {
    for (const text of [
      fc.string({ maxLength: 200 }),
      // Any UTF-16 code units, lone surrogates included (fast-check's "binary" unit costs
      // seconds to build).
      fc
        .array(fc.integer({ min: 0, max: 0xffff }), { maxLength: 100 })
        .map((units) => String.fromCharCode(...units)),
      fc.string({ unit: "grapheme", maxLength: 50 }),
      fc.string({ unit: wireChar, maxLength: 200 }),
    ]) {
      fc.assert(
        fc.property(text, (credential) => {
          parseOrMalformed(credential);
        }),
        { numRuns: 300 },
      );
    }
  });

  it("answers ChainMalformed for non-strings given from untyped callers", () => {
    for (const value of [undefined, null, 42, {}, ["a~"]]) {
      expect(() => parseChain(value as unknown as string)).toThrow(ChainMalformed);
    }
  });

  it("splits a chain into hops with their segments exactly as received", () => {
    const chain = parseChain(threeHop.credential);
    expect(chain.hops).toHaveLength(3);
    expect(chain.hops.map((h) => h.segment).join("")).toBe(
      threeHop.credential.replaceAll("~~", "~"),
    );
    for (const hop of chain.hops) {
      expect(hop.segment).toBe(`${hop.jws}~${hop.disclosures.join("~")}~`);
    }
  });

  it("refuses what exceeds the limits: length, hops, disclosures per hop", () => {
    const hop = basic.credential.split("~~")[1] as string;
    const [jws] = hop.split("~") as [string];
    // Each is well formed but for its size: only the limit refuses it.
    const huge = b64url(JSON.stringify(["salt", "x".repeat(CHAIN_LIMITS.maxChars)]));
    const oversize = `${basic.credential}${huge}~`;
    const manyHops = `${Array.from({ length: CHAIN_LIMITS.maxHops + 1 }, () => hop.slice(0, -1)).join("~~")}~`;
    const manyDisclosures = `${jws}~${"ZA~".repeat(CHAIN_LIMITS.maxDisclosuresPerHop + 1)}`;
    const cases: [string, RegExp][] = [
      [oversize, /at most 65536 characters/],
      [manyHops, /at most 8 hops/],
      [manyDisclosures, /at most 256 disclosures/],
    ];
    for (const [credential, message] of cases) {
      expect(() => parseChain(credential)).toThrow(message);
    }
    const atLimit = `${jws}~${"ZA~".repeat(CHAIN_LIMITS.maxDisclosuresPerHop)}`;
    expect(parseChain(atLimit).hops[0]?.disclosures).toHaveLength(256);
    const eightHops = `${Array.from({ length: CHAIN_LIMITS.maxHops }, () => hop.slice(0, -1)).join("~~")}~`;
    expect(parseChain(eightHops).hops).toHaveLength(8);
  });

  it("refuses a bare JWS, a trailing key-binding JWT, an empty JWS and non-JSON parts", () => {
    const [root] = basic.credential.split("~") as [string];
    for (const credential of [
      root,
      `${root}~`,
      `${basic.credential}${root}`,
      `~${basic.credential}`,
      `${root}~~~x~`,
      `${b64url("[1]")}.${b64url("{}")}.c2ln~ZA~`,
      `${b64url("{}")}.${b64url("not json")}.c2ln~ZA~`,
      `${b64url("{}")}.${b64url("{}")}.c2ln.x~ZA~`,
    ]) {
      expect(() => parseChain(credential), credential.slice(-40)).toThrow(ChainMalformed);
    }
  });
});

describe("verifyChain on altered credentials", () => {
  const credential: string = threeHop.credential;

  it("never throws on truncations", async () => {
    await fc.assert(
      fc.asyncProperty(fc.nat({ max: credential.length }), async (end) => {
        const verdict = await verifyAny(credential.slice(0, end));
        if (end < credential.length) expect(verdict?.verified ?? false).toBe(false);
      }),
      { numRuns: 150 },
    );
  });

  it("never throws on re-ordered, repeated or dropped hops and disclosures", async () => {
    const hops = credential.split("~~");
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.nat({ max: hops.length - 1 }), { minLength: 1, maxLength: 9 }),
        fc.boolean(),
        async (order, shuffleDisclosures) => {
          const picked = order.map((i) => hops[i] as string);
          const mixed = picked.map((hop) => {
            if (!shuffleDisclosures) return hop;
            const [jws, ...rest] = hop.split("~");
            return [jws, ...rest.reverse()].join("~");
          });
          const text = mixed.map((h) => h.replace(/~$/, "")).join("~~");
          const verdict = await verifyAny(`${text}~`);
          if (order.join() !== "0,1,2") expect(verdict?.verified ?? false).toBe(false);
        },
      ),
      { numRuns: 150 },
    );
  });

  it("never throws on a character changed, dropped or doubled anywhere", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.nat({ max: credential.length - 1 }),
        fc.constantFrom("drop", "double", "swap"),
        wireChar,
        async (at, edit, char) => {
          const before = credential.slice(0, at);
          const after = credential.slice(at + 1);
          const own = credential[at] as string;
          const text =
            edit === "drop"
              ? before + after
              : edit === "double"
                ? before + own + own + after
                : before + char + after;
          const verdict = await verifyAny(text);
          if (text !== credential && verdict?.verified) {
            // Only a change outside what is signed or bound can keep a chain valid: none exists
            // in this sd_hash chain but base64url's unused trailing bits, which the strict
            // decoders refuse.
            expect.unreachable(`an altered credential verified: ${edit} at ${at}`);
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it("never throws on hops whose header, payload and disclosures are arbitrary JSON", async () => {
    const json = fc.jsonValue({ maxDepth: 6 });
    const claims = fc.dictionary(
      fc.constantFrom(
        "alg",
        "typ",
        "kid",
        "crit",
        "delegate_payload",
        "_sd",
        "_sd_alg",
        "sd_hash",
        "iat",
        "exp",
        "nbf",
        "aud",
        "nonce",
        "cnf",
        "vct",
        "constraints",
        "x",
      ),
      json,
      { maxKeys: 8 },
    );
    const disclosure = fc.oneof(
      json.map((v) => b64url(JSON.stringify(v))),
      fc.tuple(fc.string(), fc.string(), json).map((v) => b64url(JSON.stringify(v))),
    );
    const hop = fc
      .tuple(claims, claims, fc.array(disclosure, { minLength: 1, maxLength: 4 }))
      .map(
        ([h, p, ds]) =>
          `${b64url(JSON.stringify(h))}.${b64url(JSON.stringify(p))}.c2ln~${ds.join("~")}`,
      );
    await fc.assert(
      fc.asyncProperty(fc.array(hop, { minLength: 1, maxLength: 4 }), async (hops) => {
        await verifyAny(`${hops.join("~~")}~`);
      }),
      { numRuns: 300 },
    );
  });

  it("refuses, without throwing, a payload nested far deeper than any mandate", async () => {
    const deep = `${"[".repeat(5000)}${"]".repeat(5000)}`;
    const [root, leaf] = basic.credential.split("~~") as [string, string];
    const [jws, ...rest] = root.split("~") as [string, ...string[]];
    const [h, , s] = jws.split(".");
    const payload = b64url(`{"delegate_payload":[{"...":"x"}],"deep":${deep}}`);
    const verdict = await verifyAny(
      `${[`${h}.${payload}.${s}`, ...rest].join("~")}~~${leaf}`,
      basic,
    );
    expect(verdict?.verified).toBe(false);
  });

  it("never throws on signed chains whose constraints and mandates are arbitrary JSON", async () => {
    const [user, agent] = await Promise.all([newSigner("ES256", "u"), newSigner("EdDSA", "a")]);
    const json = fc.jsonValue({ maxDepth: 4 });
    const field = fc.constantFrom(
      "max",
      "min",
      "currency",
      "allowed",
      "frequency",
      "max_occurrences",
      "not_before",
      "not_after",
      "conditional_transaction_id",
      "items",
      "acceptable_items",
      "quantity",
      "id",
    );
    const constraint = fc
      .tuple(
        fc.constantFrom(
          "payment.amount_range",
          "payment.budget",
          "payment.agent_recurrence",
          "payment.allowed_payees",
          "payment.allowed_payment_instruments",
          "payment.allowed_pisps",
          "payment.execution_date",
          "payment.reference",
          "checkout.allowed_merchants",
          "checkout.line_items",
          "payment.unknown",
        ),
        fc.dictionary(field, json, { maxKeys: 4 }),
      )
      .map(([type, rest]) => ({ ...rest, type }));
    const leafField = fc.constantFrom(
      "payee",
      "payment_amount",
      "payment_instrument",
      "pisp",
      "execution_date",
      "transaction_id",
      "checkout_jwt",
      "checkout_hash",
      "vct",
      "exp",
      "iat",
    );
    await fc.assert(
      fc.asyncProperty(
        fc.array(constraint, { maxLength: 4 }),
        fc.dictionary(leafField, json, { maxKeys: 3 }),
        fc.boolean(),
        async (constraints, leafChanges, checkout) => {
          const open = openPayment(agent, constraints);
          const credential = await buildChain([
            {
              signer: user,
              mandate: checkout ? { ...open, vct: "mandate.checkout.open.1" } : open,
            },
            { signer: agent, mandate: { ...closedPayment(), ...leafChanges } },
          ]);
          expectWellFormed(await verifyBuilt(credential, [user], { checkout_jwt: CHECKOUT_JWT }));
        },
      ),
      { numRuns: 200 },
    );
  });
});
