import {
  calculateJwkThumbprint,
  exportJWK,
  FlattenedSign,
  generateKeyPair,
  type JWK,
  type JWSHeaderParameters,
} from "jose";
import { afterEach, describe, expect, it, vi } from "vitest";
import { canonicalize } from "#audit/canonical";
import { base64url } from "#audit/encoding";
import {
  afterSignersRevoked,
  type CardKey,
  MAX_REASONS,
  verifyAgentCard,
} from "../../src/identity/agent-card";

// The AP2 sample merchant's A2A 0.3 card (shared/reference/a2a/merchant_agent_card_v0.3.json).
const MERCHANT_CARD = {
  name: "MerchantAgent",
  description: "A sales assistant agent for a merchant.",
  url: "http://localhost:8001/a2a/merchant_agent",
  preferredTransport: "JSONRPC",
  protocolVersion: "0.3.0",
  version: "1.0.0",
  defaultInputModes: ["json"],
  defaultOutputModes: ["json"],
  capabilities: {
    extensions: [
      {
        uri: "https://github.com/google-agentic-commerce/ap2/v1",
        description: "Supports the Agent Payments Protocol.",
        required: true,
      },
      {
        uri: "https://sample-card-network.github.io/paymentmethod/types/v1",
        description: "Supports the Sample Card Network payment method extension",
        required: true,
      },
    ],
  },
  skills: [
    {
      id: "search_catalog",
      name: "Search Catalog",
      description:
        "Searches the merchant's catalog based on a catalog search query & returns a cart containing the top results.",
      parameters: {
        type: "object",
        properties: {
          catalog_search: {
            type: "string",
            description: "A string representing the user's catalog search query.",
          },
        },
        required: ["catalog_search"],
      },
      tags: ["merchant", "search", "catalog"],
    },
  ],
};

const V1_CARD = {
  name: "GeoSpatial Route Planner Agent",
  description: "Route planning and traffic analysis.",
  supportedInterfaces: [
    {
      url: "https://georoute-agent.example.com/a2a/v1",
      protocolBinding: "JSONRPC",
      protocolVersion: "1.0",
    },
    {
      url: "https://georoute-agent.example.com/a2a/json",
      protocolBinding: "HTTP+JSON",
      protocolVersion: "1.0",
    },
  ],
  provider: { organization: "Example Geo Services Inc.", url: "https://www.example.com" },
  version: "1.2.0",
  capabilities: { streaming: true, pushNotifications: false },
  defaultInputModes: ["application/json", "text/plain"],
  defaultOutputModes: ["application/json"],
  skills: [
    {
      id: "route-optimizer-traffic",
      name: "Traffic-Aware Route Optimizer",
      description: "Calculates the optimal driving route.",
      tags: ["maps", "routing"],
    },
  ],
};

type Alg = "EdDSA" | "ES256" | "RS256" | "PS256";
interface TestKey {
  alg: Alg;
  kid: string;
  jwk: JWK;
  privateKey: CryptoKey;
}

async function newKey(alg: Alg): Promise<TestKey> {
  const rsa = alg === "RS256" || alg === "PS256";
  const pair = await generateKeyPair(alg, rsa ? { modulusLength: 2048 } : {});
  const jwk = await exportJWK(pair.publicKey);
  return {
    alg,
    jwk,
    kid: await calculateJwkThumbprint(jwk, "sha256"),
    privateKey: pair.privateKey,
  };
}

function registered(key: TestKey, status: CardKey["status"] = "active"): CardKey {
  return { kid: key.kid, jwk: key.jwk, alg: key.alg, status };
}

const encoder = new TextEncoder();

function unsigned(card: Record<string, unknown>) {
  const { signatures: _, ...rest } = card;
  return rest;
}

/** A detached-payload JWS over `payload` (by default the JCS form of the unsigned card). */
async function sign(
  card: Record<string, unknown>,
  key: TestKey,
  options: { header?: JWSHeaderParameters; payload?: string } = {},
) {
  const payload = options.payload ?? canonicalize(unsigned(card));
  const jws = await new FlattenedSign(encoder.encode(payload))
    .setProtectedHeader({ alg: key.alg, typ: "JOSE", kid: key.kid, ...options.header })
    .sign(key.privateKey);
  return { protected: jws.protected as string, signature: jws.signature };
}

function encodeHeader(header: Record<string, unknown>) {
  return base64url(encoder.encode(JSON.stringify(header)));
}

async function signed(card: Record<string, unknown>, key: TestKey) {
  return { ...card, signatures: [await sign(card, key)] };
}

async function expectedDigest(card: Record<string, unknown>) {
  const bytes = await crypto.subtle.digest("SHA-256", encoder.encode(canonicalize(unsigned(card))));
  return `sha256:${Array.from(new Uint8Array(bytes), (b) => b.toString(16).padStart(2, "0")).join("")}`;
}

const codes = (check: { reasons: { code: string; path?: string }[] }) =>
  check.reasons.map((r) => (r.path === undefined ? r.code : `${r.code}@${r.path}`));

afterEach(() => {
  vi.restoreAllMocks();
});

describe("a valid signed card", () => {
  it("verifies the reference 0.3 merchant card signed with EdDSA", async () => {
    const key = await newKey("EdDSA");
    const card = await signed(MERCHANT_CARD, key);
    const check = await verifyAgentCard(card, [registered(key)]);
    expect(check).toEqual({
      status: "verified",
      protocol_version: "0.3",
      digest: await expectedDigest(card),
      name: "MerchantAgent",
      url: "http://localhost:8001/a2a/merchant_agent",
      reasons: [],
      signatures: [
        {
          index: 0,
          kid: key.kid,
          alg: "EdDSA",
          status: "valid",
          message: "the signature verifies",
          // 0.3 specifies the card as received: no default-value rules, no second form.
          form: "spec",
          diagnosis: null,
        },
      ],
    });
  });

  it("verifies an ES256 signature", async () => {
    const key = await newKey("ES256");
    const check = await verifyAgentCard(await signed(MERCHANT_CARD, key), [registered(key)]);
    expect(check.status).toBe("verified");
    expect(check.signatures.map((s) => [s.alg, s.status])).toEqual([["ES256", "valid"]]);
  });

  it("verifies RS256 and PS256 signatures from 2048-bit RSA keys", async () => {
    for (const alg of ["RS256", "PS256"] as const) {
      const key = await newKey(alg);
      const check = await verifyAgentCard(await signed(MERCHANT_CARD, key), [registered(key)]);
      expect(check.status).toBe("verified");
      expect(check.signatures[0]?.alg).toBe(alg);
    }
  });

  it("verifies a 1.0 card and takes the preferred (first) interface as its url", async () => {
    const key = await newKey("EdDSA");
    const card = await signed(V1_CARD, key);
    const check = await verifyAgentCard(card, [registered(key)]);
    expect(check).toMatchObject({
      status: "verified",
      protocol_version: "1.0",
      digest: await expectedDigest(card),
      name: "GeoSpatial Route Planner Agent",
      url: "https://georoute-agent.example.com/a2a/v1",
      reasons: [],
    });
  });

  it("has a digest independent of key order and of the signatures", async () => {
    const key = await newKey("EdDSA");
    const reordered = Object.fromEntries(Object.entries(MERCHANT_CARD).reverse());
    const a = await verifyAgentCard(await signed(MERCHANT_CARD, key), [registered(key)]);
    const b = await verifyAgentCard(reordered, []);
    expect(b.digest).toBe(a.digest);
  });

  it("is verified when one signature is valid and another is from an unknown key", async () => {
    const key = await newKey("EdDSA");
    const other = await newKey("ES256");
    const card = {
      ...MERCHANT_CARD,
      signatures: [await sign(MERCHANT_CARD, other), await sign(MERCHANT_CARD, key)],
    };
    const check = await verifyAgentCard(card, [registered(key)]);
    expect(check.status).toBe("verified");
    expect(check.signatures.map((s) => s.status)).toEqual(["unknown_key", "valid"]);
    expect(codes(check)).toEqual(["signature_unknown_key@signatures[0]"]);
  });

  it("never fetches a jku the header points at", async () => {
    const fetchSpy = vi.spyOn(globalThis, "fetch");
    const key = await newKey("EdDSA");
    const card = {
      ...MERCHANT_CARD,
      signatures: [await sign(MERCHANT_CARD, key, { header: { jku: "https://evil.example/k" } })],
    };
    expect((await verifyAgentCard(card, [registered(key)])).status).toBe("verified");
    expect(fetchSpy).not.toHaveBeenCalled();
  });
});

describe("a broken signature", () => {
  it("is invalid when a field changed after signing, and matches no form", async () => {
    const key = await newKey("EdDSA");
    const card = { ...(await signed(MERCHANT_CARD, key)), url: "https://attacker.example/a2a" };
    const check = await verifyAgentCard(card, [registered(key)]);
    expect(check.status).toBe("invalid");
    expect(check.signatures[0]).toEqual({
      index: 0,
      kid: key.kid,
      alg: "EdDSA",
      status: "invalid",
      message:
        "the signature does not match the canonical card: the card changed after it was " +
        "signed, or other bytes or another key were signed",
      form: null,
      diagnosis: "matches_no_form",
    });
    expect(codes(check)).toEqual(["signature_invalid@signatures[0]"]);
  });

  it("is invalid when made by another key claiming the registered kid", async () => {
    const key = await newKey("EdDSA");
    const impostor = { ...(await newKey("EdDSA")), kid: key.kid };
    const card = { ...MERCHANT_CARD, signatures: [await sign(MERCHANT_CARD, impostor)] };
    const check = await verifyAgentCard(card, [registered(key)]);
    expect(check.status).toBe("invalid");
    expect(check.signatures[0]).toMatchObject({ kid: key.kid, status: "invalid" });
  });

  it("never verifies with a revoked key", async () => {
    const key = await newKey("EdDSA");
    const check = await verifyAgentCard(await signed(MERCHANT_CARD, key), [
      registered(key, "revoked"),
    ]);
    expect(check.status).toBe("unverified");
    expect(check.signatures[0]?.status).toBe("revoked_key");
    expect(codes(check)).toEqual(["signature_revoked_key@signatures[0]"]);
  });

  it("treats a kid the registry lists as both active and revoked as revoked", async () => {
    const key = await newKey("EdDSA");
    const card = await signed(MERCHANT_CARD, key);
    for (const keys of [
      [registered(key, "revoked"), registered(key)],
      [registered(key), registered(key, "revoked")],
    ]) {
      expect((await verifyAgentCard(card, keys)).signatures[0]?.status).toBe("revoked_key");
    }
  });

  it("is unknown_key when the kid is not registered", async () => {
    const key = await newKey("EdDSA");
    const stranger = await newKey("EdDSA");
    const check = await verifyAgentCard(await signed(MERCHANT_CARD, key), [registered(stranger)]);
    expect(check.status).toBe("unverified");
    expect(check.signatures[0]).toMatchObject({ kid: key.kid, status: "unknown_key" });
    expect(codes(check)).toEqual(["signature_unknown_key@signatures[0]"]);
  });

  it("is invalid when the signer serialised the card with JSON.stringify, not JCS", async () => {
    const key = await newKey("EdDSA");
    const body = unsigned(MERCHANT_CARD);
    for (const payload of [JSON.stringify(body), JSON.stringify(body, null, 2)]) {
      const card = { ...MERCHANT_CARD, signatures: [await sign(MERCHANT_CARD, key, { payload })] };
      const check = await verifyAgentCard(card, [registered(key)]);
      expect(check.status).toBe("invalid");
      expect(check.signatures[0]?.status).toBe("invalid");
    }
  });

  it("is invalid when the signed payload still contained the signatures", async () => {
    const key = await newKey("EdDSA");
    const first = await signed(MERCHANT_CARD, key);
    const card = {
      ...first,
      signatures: [await sign(first, key, { payload: canonicalize(first) })],
    };
    expect((await verifyAgentCard(card, [registered(key)])).status).toBe("invalid");
  });

  it("refuses alg none", async () => {
    const key = await newKey("EdDSA");
    const card = {
      ...MERCHANT_CARD,
      signatures: [
        { protected: encodeHeader({ alg: "none", typ: "JOSE", kid: key.kid }), signature: "" },
      ],
    };
    const check = await verifyAgentCard(card, [registered(key)]);
    expect(check.status).toBe("invalid");
    expect(check.signatures[0]).toMatchObject({ alg: "none", status: "unsupported_alg" });
    expect(codes(check)).toEqual(["signature_unsupported_alg@signatures[0]"]);
  });

  it("refuses HS256, even keyed with the registered public key", async () => {
    const key = await newKey("EdDSA");
    const secret = encoder.encode(JSON.stringify(key.jwk));
    const jws = await new FlattenedSign(encoder.encode(canonicalize(MERCHANT_CARD)))
      .setProtectedHeader({ alg: "HS256", typ: "JOSE", kid: key.kid })
      .sign(secret);
    const card = {
      ...MERCHANT_CARD,
      signatures: [{ protected: jws.protected as string, signature: jws.signature }],
    };
    const check = await verifyAgentCard(card, [registered(key)]);
    expect(check.status).toBe("invalid");
    expect(check.signatures[0]).toMatchObject({ alg: "HS256", status: "unsupported_alg" });
  });

  it("is invalid when the alg does not fit the registered key's type", async () => {
    const ed = await newKey("EdDSA");
    const ec = { ...(await newKey("ES256")), kid: ed.kid };
    const card = { ...MERCHANT_CARD, signatures: [await sign(MERCHANT_CARD, ec)] };
    const check = await verifyAgentCard(card, [registered(ed)]);
    expect(check.status).toBe("invalid");
    expect(check.signatures[0]).toMatchObject({ alg: "ES256", status: "invalid" });
  });

  it("is malformed without a kid, without typ, with a typ other than JOSE, or with b64", async () => {
    const key = await newKey("EdDSA");
    for (const header of [
      { kid: undefined },
      { typ: undefined },
      { typ: "JWT" },
      { b64: true, crit: ["b64"] },
    ]) {
      const card = { ...MERCHANT_CARD, signatures: [await sign(MERCHANT_CARD, key, { header })] };
      const check = await verifyAgentCard(card, [registered(key)]);
      expect(check.status).toBe("invalid");
      expect(check.signatures[0]?.status).toBe("malformed");
      expect(codes(check)).toEqual(["signature_malformed@signatures[0]"]);
    }
  });

  it("is invalid when the alg is another than the key was registered for", async () => {
    // An RSA key registered for RS256 signs with PS256: one key, one algorithm.
    const key = await newKey("PS256");
    const card = await signed(MERCHANT_CARD, key);
    const check = await verifyAgentCard(card, [registered({ ...key, alg: "RS256" })]);
    expect(check.status).toBe("invalid");
    expect(check.signatures[0]).toMatchObject({
      alg: "PS256",
      status: "invalid",
      message: "the key is registered for RS256, not PS256",
    });
  });

  it("is unsupported_alg for an alg no registered key can have, such as ES384", async () => {
    const key = await newKey("EdDSA");
    const p384 = await generateKeyPair("ES384");
    const jws = await new FlattenedSign(encoder.encode(canonicalize(MERCHANT_CARD)))
      .setProtectedHeader({ alg: "ES384", typ: "JOSE", kid: key.kid })
      .sign(p384.privateKey);
    const card = {
      ...MERCHANT_CARD,
      signatures: [{ protected: jws.protected as string, signature: jws.signature }],
    };
    const check = await verifyAgentCard(card, [registered(key)]);
    expect(check.signatures[0]).toMatchObject({ alg: "ES384", status: "unsupported_alg" });
  });

  it("is malformed when the item is not a JWS object", async () => {
    const key = await newKey("EdDSA");
    const good = await sign(MERCHANT_CARD, key);
    for (const item of [
      "eyJhbGciOiJFZERTQSJ9..sig",
      { protected: good.protected },
      { protected: "not base64url json!", signature: good.signature },
      { ...good, header: "kid" },
    ]) {
      const check = await verifyAgentCard({ ...MERCHANT_CARD, signatures: [item] }, [
        registered(key),
      ]);
      expect(check.status).toBe("invalid");
      expect(check.signatures).toEqual([
        {
          index: 0,
          kid: null,
          alg: null,
          status: "malformed",
          message: expect.any(String),
          form: null,
          diagnosis: null,
        },
      ]);
    }
  });
});

describe("an unsigned card", () => {
  it("is unverified with no_signature, whether signatures is absent or empty", async () => {
    for (const card of [MERCHANT_CARD, { ...MERCHANT_CARD, signatures: [] }]) {
      const check = await verifyAgentCard(card, []);
      expect(check.status).toBe("unverified");
      expect(check.protocol_version).toBe("0.3");
      expect(check.signatures).toEqual([]);
      expect(codes(check)).toEqual(["no_signature"]);
    }
  });

  it("is invalid when signatures is not an array", async () => {
    const check = await verifyAgentCard({ ...MERCHANT_CARD, signatures: {} }, []);
    expect(check.status).toBe("invalid");
    expect(codes(check)).toEqual(["wrong_type@signatures"]);
  });
});

describe("the card's shape", () => {
  const REQUIRED_03 = [
    "protocolVersion",
    "name",
    "description",
    "url",
    "version",
    "capabilities",
    "defaultInputModes",
    "defaultOutputModes",
    "skills",
  ];
  const REQUIRED_10 = [
    "name",
    "description",
    "supportedInterfaces",
    "version",
    "capabilities",
    "defaultInputModes",
    "defaultOutputModes",
    "skills",
  ];

  it.each(REQUIRED_03)("0.3: a card without %s is invalid", async (field) => {
    const { [field]: _, ...card } = MERCHANT_CARD as Record<string, unknown>;
    const check = await verifyAgentCard(card, [], { version: "0.3" });
    expect(check.status).toBe("invalid");
    expect(codes(check)).toEqual([`missing_field@${field}`, "no_signature"]);
  });

  it.each(REQUIRED_10)("1.0: a card without %s is invalid", async (field) => {
    const { [field]: _, ...card } = V1_CARD as Record<string, unknown>;
    const check = await verifyAgentCard(card, [], { version: "1.0" });
    expect(check.status).toBe("invalid");
    expect(codes(check)).toEqual([`missing_field@${field}`, "no_signature"]);
  });

  it("reports every problem at once, each by path", async () => {
    const card = {
      ...MERCHANT_CARD,
      name: 42,
      capabilities: [],
      defaultInputModes: ["json", 7],
      skills: [{ id: "s", name: "S", tags: "x" }, "skill"],
      provider: { organization: "Acme" },
      url: "/relative",
    };
    const check = await verifyAgentCard(card, []);
    expect(check.status).toBe("invalid");
    expect(check.name).toBeNull();
    expect(codes(check)).toEqual([
      "wrong_type@name",
      "wrong_type@capabilities",
      "wrong_type@defaultInputModes[1]",
      "missing_field@skills[0].description",
      "wrong_type@skills[0].tags",
      "wrong_type@skills[1]",
      "missing_field@provider.url",
      "invalid_url@url",
      "no_signature",
    ]);
  });

  it("1.0: checks each interface and refuses empty required arrays", async () => {
    const card = {
      ...V1_CARD,
      supportedInterfaces: [{ url: "https://a.example.com/a2a", protocolVersion: "1.0" }],
      skills: [],
    };
    const check = await verifyAgentCard(card, []);
    expect(codes(check)).toEqual([
      "empty_array@skills",
      "missing_field@supportedInterfaces[0].protocolBinding",
      "no_signature",
    ]);
  });

  it("stays invalid when a well-signed card has a bad shape", async () => {
    const key = await newKey("EdDSA");
    const { version: _, ...card } = MERCHANT_CARD;
    const check = await verifyAgentCard(await signed(card, key), [registered(key)]);
    expect(check.status).toBe("invalid");
    expect(check.signatures[0]?.status).toBe("valid");
    expect(codes(check)).toEqual(["missing_field@version"]);
  });

  it("is invalid when the card is not an object", async () => {
    for (const card of [null, "card", [MERCHANT_CARD], 42]) {
      const check = await verifyAgentCard(card, []);
      expect(check).toMatchObject({ status: "invalid", digest: null, protocol_version: null });
      expect(codes(check)).toEqual(["not_an_object"]);
    }
  });
});

describe("the protocol version", () => {
  it("is refused when a card declares one other than 0.3", async () => {
    for (const protocolVersion of ["0.2.6", "1.0", "0.30", 3]) {
      const check = await verifyAgentCard({ ...MERCHANT_CARD, protocolVersion }, []);
      expect(check).toMatchObject({ status: "invalid", protocol_version: null });
      expect(codes(check)).toEqual(["unsupported_version@protocolVersion", "no_signature"]);
    }
  });

  it("is refused when no 1.0 interface speaks a version we support", async () => {
    const card = {
      ...V1_CARD,
      supportedInterfaces: [
        { url: "https://a.example.com", protocolBinding: "JSONRPC", protocolVersion: "2.0" },
      ],
    };
    const check = await verifyAgentCard(card, []);
    expect(check.status).toBe("invalid");
    expect(codes(check)).toEqual(["unsupported_version@supportedInterfaces", "no_signature"]);
  });

  it("accepts a 1.0 card whose interfaces also speak 0.3", async () => {
    const card = {
      ...V1_CARD,
      supportedInterfaces: [
        { url: "https://a.example.com", protocolBinding: "JSONRPC", protocolVersion: "0.3" },
        { url: "https://b.example.com", protocolBinding: "JSONRPC", protocolVersion: "1.0" },
      ],
    };
    const check = await verifyAgentCard(card, []);
    expect(check).toMatchObject({ status: "unverified", protocol_version: "1.0" });
  });

  it("is unknown when the card has neither protocolVersion nor supportedInterfaces", async () => {
    const { protocolVersion: _, ...card } = MERCHANT_CARD;
    const check = await verifyAgentCard(card, []);
    expect(check).toMatchObject({ status: "invalid", protocol_version: null, url: null });
    expect(check.name).toBe("MerchantAgent");
    expect(codes(check)).toEqual(["unknown_version", "no_signature"]);
  });

  it("can be forced by the caller, overriding detection", async () => {
    const check = await verifyAgentCard(MERCHANT_CARD, [], { version: "1.0" });
    expect(check.protocol_version).toBe("1.0");
    expect(codes(check)).toEqual(["missing_field@supportedInterfaces", "no_signature"]);
  });
});

describe("bounds on what a card may make the service do", () => {
  it("refuses more than 10 signatures without checking any", async () => {
    const key = await newKey("EdDSA");
    const one = await sign(MERCHANT_CARD, key);
    const check = await verifyAgentCard({ ...MERCHANT_CARD, signatures: Array(11).fill(one) }, [
      registered(key),
    ]);
    expect(check.status).toBe("invalid");
    expect(check.signatures).toEqual([]);
    expect(codes(check)).toEqual(["too_many_signatures@signatures"]);
  });

  it("refuses a card nested deeper than 32 levels", async () => {
    let deep: unknown = "bottom";
    for (let i = 0; i < 40; i++) deep = { d: deep };
    const check = await verifyAgentCard({ ...MERCHANT_CARD, capabilities: deep }, []);
    expect(check).toMatchObject({ status: "invalid", digest: null, signatures: [] });
    expect(check.reasons).toEqual([
      {
        code: "too_deep",
        message: expect.any(String),
        path: `capabilities${".d".repeat(31)}`,
      },
    ]);
  });

  it("refuses a list of more than 1000 items", async () => {
    const skills = Array.from({ length: 1001 }, () => ({}));
    const check = await verifyAgentCard({ ...MERCHANT_CARD, skills }, []);
    expect(check.status).toBe("invalid");
    expect(codes(check)).toEqual(["too_large@skills"]);
  });

  it("reports at most 50 reasons, then says how many more there were", async () => {
    // 1000 empty skills: 4 missing fields each.
    const skills = Array.from({ length: 1000 }, () => ({}));
    const check = await verifyAgentCard({ ...MERCHANT_CARD, skills }, []);
    expect(check.status).toBe("invalid");
    expect(check.reasons).toHaveLength(MAX_REASONS + 1);
    expect(check.reasons.at(-1)).toEqual({
      code: "truncated",
      message: "3951 more reasons not shown",
    });
  });

  it("reports card text Postgres cannot store (NUL, lone surrogates) with U+FFFD", async () => {
    const key = await newKey("EdDSA");
    const card = await signed(
      { ...MERCHANT_CARD, name: "Bad\u0000Name\ud800", url: "https://a.example/\u0000" },
      key,
    );
    card.signatures.push(await sign(MERCHANT_CARD, key, { header: { kid: "k\u0000\udc00" } }));
    const check = await verifyAgentCard(card, [registered(key)]);
    expect(check.name).toBe("Bad\uFFFDName\uFFFD");
    expect(check.url).toBe("https://a.example/\uFFFD");
    expect(check.signatures[1]?.kid).toBe("k\uFFFD\uFFFD");
    expect(JSON.stringify(check)).not.toMatch(/\\u0000|\\ud[89a-f]/);
  });
});

describe("a check raced by a revocation", () => {
  it("reads unverified, its valid signatures revoked_key", async () => {
    const key = await newKey("EdDSA");
    const other = await newKey("EdDSA");
    const card = {
      ...MERCHANT_CARD,
      signatures: [await sign(MERCHANT_CARD, other), await sign(MERCHANT_CARD, key)],
    };
    const check = await verifyAgentCard(card, [registered(key)]);
    const after = afterSignersRevoked(check);
    expect(after.status).toBe("unverified");
    expect(after.signatures.map((s) => s.status)).toEqual(["unknown_key", "revoked_key"]);
    // What it verified over stays on record: it did verify, before the key went.
    expect(after.signatures.map((s) => s.form)).toEqual([null, "spec"]);
    expect(codes(after)).toEqual([
      "signature_unknown_key@signatures[0]",
      "signature_revoked_key@signatures[1]",
    ]);
  });
});

describe("the signed payload is the RFC 8785 form of the card", () => {
  // RFC 8785 §3.2.2 (values and string escapes) and §3.2.3 (property sorting by UTF-16 code
  // units, a non-BMP key included), plus the number edge cases of Appendix B.
  const VALUES = String.raw`{"numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001], "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/", "literals": [null, true, false]}`;
  const SORTING = String.raw`{"\u20ac": "Euro Sign", "\r": "Carriage Return", "\ufb33": "Hebrew Letter Dalet With Dagesh", "1": "One", "\ud83d\ude00": "Emoji: Grinning Face", "\u0080": "Control", "\u00f6": "Latin Small Letter O With Diaeresis"}`;
  const EDGES = "[1e21, 1e-7, -0, 1e-6, 100]";
  // The expected texts as the RFC prints them (§3.2.2, §3.2.3), written out by hand.
  const VALUES_JCS =
    '{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],' +
    '"string":"\u20ac$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}';
  const SORTING_JCS =
    '{"\\r":"Carriage Return","1":"One","\u0080":"Control",' +
    '"\u00f6":"Latin Small Letter O With Diaeresis","\u20ac":"Euro Sign",' +
    '"\ud83d\ude00":"Emoji: Grinning Face","\ufb33":"Hebrew Letter Dalet With Dagesh"}';
  const EDGES_JCS = "[1e+21,1e-7,0,0.000001,100]";

  const card = {
    protocolVersion: "0.3.0",
    name: "N",
    description: "D",
    url: "https://a.example/a2a",
    version: "1",
    capabilities: {},
    defaultInputModes: ["json"],
    defaultOutputModes: ["json"],
    skills: [{ id: "s", name: "S", description: "D", tags: ["t"] }],
    "x-jcs": {
      values: JSON.parse(VALUES),
      sorting: JSON.parse(SORTING),
      edges: JSON.parse(EDGES),
    },
  };
  const CARD_JCS =
    '{"capabilities":{},"defaultInputModes":["json"],"defaultOutputModes":["json"],' +
    '"description":"D","name":"N","protocolVersion":"0.3.0",' +
    '"skills":[{"description":"D","id":"s","name":"S","tags":["t"]}],' +
    `"url":"https://a.example/a2a","version":"1",` +
    `"x-jcs":{"edges":${EDGES_JCS},"sorting":${SORTING_JCS},"values":${VALUES_JCS}}}`;

  it("canonicalizes the RFC's examples to the RFC's texts", () => {
    expect(canonicalize(JSON.parse(VALUES))).toBe(VALUES_JCS);
    expect(canonicalize(JSON.parse(SORTING))).toBe(SORTING_JCS);
    expect(canonicalize(JSON.parse(EDGES))).toBe(EDGES_JCS);
  });

  it("verifies a signature made over the hand-written canonical text", async () => {
    const key = await newKey("EdDSA");
    const signedCard = { ...card, signatures: [await sign(card, key, { payload: CARD_JCS })] };
    const check = await verifyAgentCard(signedCard, [registered(key)]);
    expect(check.status).toBe("verified");
    const digest = await crypto.subtle.digest("SHA-256", encoder.encode(CARD_JCS));
    const hex = Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0"));
    expect(check.digest).toBe(`sha256:${hex.join("")}`);
  });
});
