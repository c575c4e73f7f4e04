import { type AgentCard, verifyAgentCardSignature } from "@a2a-js/sdk";
import fc from "fast-check";
import { CompactSign } from "jose";
import { describe, expect, it } from "vitest";
import { canonicalize } from "#audit/canonical";
import { type CardForm, type CardKey, verifyAgentCard } from "../../src/identity/agent-card";
import { agentCard, EXAMPLE, EXAMPLE_SPEC } from "../support/agent-cards";
import { type AgentKeyPair, keyPair, sdkSignCard } from "./support/identity";

// Cards signed by the official A2A JS SDK (@a2a-js/sdk, pinned), as an agent would sign them:
// `generateAgentCardSignature` with ES256 or EdDSA, `kid` the RFC 7638 thumbprint of a key the
// agent registered. The Node test proves the SDK form equal to the SDK's payload; these prove
// that what the SDK signs verifies, and what was changed after signing does not.

type Json = Record<string, unknown>;
const ALGS = ["ES256", "EdDSA"] as const;

/** A signer that canonicalizes on its own and signs `text`. */
async function signedOver(card: Json, pair: AgentKeyPair, text: string): Promise<Json> {
  const jws = await new CompactSign(new TextEncoder().encode(text))
    .setProtectedHeader({ alg: pair.alg, typ: "JOSE", kid: pair.kid })
    .sign(pair.privateKey);
  const [protectedHeader, , signature] = jws.split(".");
  return { ...card, signatures: [{ protected: protectedHeader, signature }] };
}

const keysOf = (pair: AgentKeyPair): CardKey[] => [
  { kid: pair.kid, jwk: pair.publicJwk, alg: pair.alg, status: "active" },
];

function unsigned(card: Json): Json {
  const { signatures: _, ...rest } = card;
  return rest;
}

async function digestOf(card: Json) {
  const text = canonicalize(unsigned(card));
  const bytes = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return `sha256:${Array.from(new Uint8Array(bytes), (b) => b.toString(16).padStart(2, "0")).join("")}`;
}

const SDK_FORM = (uncovered = "") =>
  "the signature verifies over the card as the official A2A SDKs canonicalize it, not over " +
  `its A2A 1.0 §8.4.1 form${uncovered && `; it does not cover ${uncovered}, which the SDKs leave out`}`;
const NO_FORM =
  "the signature does not match the card's canonical form (A2A 1.0 §8.4.1), the official " +
  "SDKs' form or the card as received: the card changed after it was signed, or other bytes " +
  "or another key were signed";
const AS_RECEIVED =
  "the signature verifies over the card as received but not over its canonical form: the " +
  "signer kept fields at their default value, which A2A 1.0 §8.4.1 omits (the card is as it " +
  "was signed; its signer needs fixing)";

const SKILL = {
  id: "route",
  name: "Route",
  description: "Plans a route.",
  tags: ["maps"],
  examples: ["From the station to the airport"],
};
const INTERFACE = {
  url: "https://agent.example.com/a2a/v1",
  protocolBinding: "JSONRPC",
  protocolVersion: "1.0",
};
/** A 1.0 card with no field at its default value. */
const BASE: Json = {
  name: "Route Planner",
  description: "Plans routes.",
  supportedInterfaces: [INTERFACE],
  provider: { organization: "Example Geo", url: "https://geo.example.com" },
  version: "1.2.0",
  documentationUrl: "https://docs.example.com/agent",
  capabilities: { streaming: true, pushNotifications: true },
  securitySchemes: {
    oidc: {
      openIdConnectSecurityScheme: {
        openIdConnectUrl: "https://accounts.example.com/.well-known/openid-configuration",
      },
    },
  },
  securityRequirements: [{ schemes: { oidc: { list: ["openid"] } } }],
  defaultInputModes: ["text/plain"],
  defaultOutputModes: ["application/json"],
  skills: [SKILL],
};

interface Case {
  name: string;
  card: Json;
  /** The form the SDK's signature verifies over: `spec` where the two forms coincide. */
  form: CardForm;
  message: string;
  /** One field changed after signing. */
  changed: Json;
}

const with_ = (fields: Json): Json => ({ ...BASE, ...fields });
const capabilities = (fields: Json) => ({ ...(BASE.capabilities as Json), ...fields });
const SIGNED = "the signature verifies";

const CASES: Case[] = [
  {
    name: "no field at its default value",
    card: BASE,
    form: "spec",
    message: SIGNED,
    changed: with_({ name: "Route Planner Pro" }),
  },
  {
    name: "the card: an empty securitySchemes map and securityRequirements list",
    card: with_({ securitySchemes: {}, securityRequirements: [] }),
    form: "spec",
    message: SIGNED,
    changed: with_({ securitySchemes: {} }),
  },
  {
    name: "capabilities: optional flags set to false, an empty extension list",
    card: with_({
      capabilities: {
        streaming: false,
        pushNotifications: false,
        extendedAgentCard: false,
        extensions: [],
      },
    }),
    form: "spec",
    message: SIGNED,
    changed: with_({ capabilities: { streaming: false, pushNotifications: false } }),
  },
  {
    name: "capabilities: none at all, a REQUIRED message left empty",
    card: with_({ capabilities: {} }),
    form: "sdk",
    message: SDK_FORM(),
    changed: with_({ capabilities: { streaming: false } }),
  },
  {
    name: "skills: empty examples, modes and security requirements",
    card: with_({
      skills: [{ ...SKILL, examples: [], inputModes: [], securityRequirements: [] }],
    }),
    form: "spec",
    message: SIGNED,
    changed: with_({ skills: [{ ...SKILL, examples: ["Drop the table"] }] }),
  },
  {
    name: "skills: an empty REQUIRED description",
    card: with_({ skills: [{ ...SKILL, description: "" }] }),
    form: "sdk",
    message: SDK_FORM(),
    changed: with_({ skills: [{ ...SKILL, description: "Plans a detour." }] }),
  },
  {
    name: "interfaces: an empty tenant",
    card: with_({ supportedInterfaces: [{ ...INTERFACE, tenant: "" }] }),
    form: "spec",
    message: SIGNED,
    changed: with_({ supportedInterfaces: [{ ...INTERFACE, tenant: "other" }] }),
  },
  {
    name: "provider: an empty REQUIRED url",
    card: with_({ provider: { organization: "Example Geo", url: "" } }),
    form: "sdk",
    message: SDK_FORM(),
    changed: with_({ provider: { organization: "Example Geo", url: "https://evil.example" } }),
  },
  {
    name: "an extension at its defaults: empty description and params, required false",
    card: with_({
      capabilities: capabilities({
        extensions: [
          { uri: "https://ext.example/v1", description: "", required: false, params: {} },
        ],
      }),
    }),
    form: "sdk",
    message: SDK_FORM(),
    changed: with_({
      capabilities: capabilities({
        extensions: [{ uri: "https://ext.example/v1", required: true }],
      }),
    }),
  },
  {
    name: "security schemes: mutual TLS alone, API key and OAuth2 with empty optional fields",
    card: with_({
      securitySchemes: {
        mtls: { mtlsSecurityScheme: {} },
        key: { apiKeySecurityScheme: { description: "", location: "header", name: "X-Key" } },
        oauth: {
          oauth2SecurityScheme: {
            description: "",
            oauth2MetadataUrl: "",
            flows: {
              clientCredentials: {
                tokenUrl: "https://auth.example.com/token",
                refreshUrl: "",
                scopes: {},
              },
            },
          },
        },
      },
    }),
    form: "sdk",
    // The SDKs drop an entry whose scheme has nothing set: the signature says nothing of it.
    message: SDK_FORM("securitySchemes.mtls"),
    changed: with_({
      securitySchemes: {
        mtls: { mtlsSecurityScheme: {} },
        key: { apiKeySecurityScheme: { location: "query", name: "X-Key" } },
      },
    }),
  },
  {
    name: "an empty optional string: documentationUrl and iconUrl set to an empty string",
    card: with_({ documentationUrl: "", iconUrl: "" }),
    form: "sdk",
    message: SDK_FORM(),
    changed: with_({ documentationUrl: "https://evil.example/docs", iconUrl: "" }),
  },
];

describe.each(ALGS)("a 1.0 card signed by the official SDK with %s", (alg) => {
  it.each(CASES)("verifies, with $name", async ({ card, form, message }) => {
    const pair = await keyPair(alg);
    const signed = await sdkSignCard(card, pair);
    // The premise: the SDK's own verifier accepts what its signer made.
    const sdkVerify = verifyAgentCardSignature(async () => pair.publicJwk);
    await expect(sdkVerify(signed as unknown as AgentCard)).resolves.toBeUndefined();

    expect(await verifyAgentCard(signed, keysOf(pair))).toEqual({
      status: "verified",
      protocol_version: "1.0",
      // The digest stays that of the card as received: agents are matched by it.
      digest: await digestOf(signed),
      name: card.name,
      url: INTERFACE.url,
      reasons: [],
      signatures: [
        { index: 0, kid: pair.kid, alg, status: "valid", message, form, diagnosis: null },
      ],
    });
  });

  it.each(CASES)("is invalid once one field changed, with $name", async ({ card, changed }) => {
    const pair = await keyPair(alg);
    const { signatures } = await sdkSignCard(card, pair);
    const check = await verifyAgentCard({ ...changed, signatures }, keysOf(pair));
    expect(check.status).toBe("invalid");
    expect(check.signatures).toEqual([
      {
        index: 0,
        kid: pair.kid,
        alg,
        status: "invalid",
        message: NO_FORM,
        form: null,
        diagnosis: "matches_no_form",
      },
    ]);
    expect(check.reasons).toEqual([
      { code: "signature_invalid", message: NO_FORM, path: "signatures[0]" },
    ]);
  });
});

describe("the documented example card", () => {
  const card = unsigned(EXAMPLE);

  it("verifies over its §8.4.1 form, written out by hand", async () => {
    const pair = await keyPair("EdDSA");
    const check = await verifyAgentCard(await signedOver(card, pair, EXAMPLE_SPEC), keysOf(pair));
    expect(check.status).toBe("verified");
    expect(check.signatures[0]).toMatchObject({ status: "valid", form: "spec", diagnosis: null });
  });

  it("says a signer that skipped the default-value rules is broken, not the card", async () => {
    const pair = await keyPair("EdDSA");
    const signed = await signedOver(card, pair, canonicalize(card));
    const check = await verifyAgentCard(signed, keysOf(pair));
    expect(check.status).toBe("invalid");
    expect(check.signatures[0]).toEqual({
      index: 0,
      kid: pair.kid,
      alg: "EdDSA",
      status: "invalid",
      message: AS_RECEIVED,
      form: null,
      diagnosis: "signed_as_received",
    });
    expect(check.reasons).toEqual([
      { code: "signature_invalid", message: AS_RECEIVED, path: "signatures[0]" },
    ]);
  });

  it("matches no form once changed after a §8.4.1 signature", async () => {
    const pair = await keyPair("EdDSA");
    const signed = await signedOver(card, pair, EXAMPLE_SPEC);
    const check = await verifyAgentCard({ ...signed, version: "1.0.1" }, keysOf(pair));
    expect(check.signatures[0]).toMatchObject({ status: "invalid", diagnosis: "matches_no_form" });
  });
});

describe("fields outside the A2A 1.0 card", () => {
  const card = with_({ "x-internal": { tier: "gold" } });

  it("are not covered by an SDK signature, and the status names them", async () => {
    const pair = await keyPair("ES256");
    const { signatures } = await sdkSignCard(card, pair);
    // The SDKs drop unknown fields before signing, so a changed one still verifies.
    for (const tier of ["gold", "platinum"]) {
      const check = await verifyAgentCard(
        { ...card, "x-internal": { tier }, signatures },
        keysOf(pair),
      );
      expect(check.status).toBe("verified");
      expect(check.signatures[0]).toMatchObject({
        form: "sdk",
        message: SDK_FORM("x-internal"),
      });
    }
  });

  it("are named five at most, each cut at 80 characters, the rest counted", async () => {
    const pair = await keyPair("ES256");
    const long = `x-${"a".repeat(500)}`;
    const extra = Object.fromEntries([long, "x-1", "x-2", "x-3", "x-4", "x-5"].map((k) => [k, 1]));
    const check = await verifyAgentCard(await sdkSignCard(with_(extra), pair), keysOf(pair));
    expect(check.signatures[0]?.message).toBe(
      SDK_FORM(`${long.slice(0, 80)}…, x-1, x-2, x-3, x-4 and 1 more`),
    );
  });

  it("are covered by a §8.4.1 signature, which keeps them", async () => {
    const pair = await keyPair("ES256");
    const spec = { ...card, capabilities: { streaming: true, pushNotifications: true } };
    const signed = await signedOver(spec, pair, canonicalize(spec));
    const ok = await verifyAgentCard(signed, keysOf(pair));
    expect(ok.signatures[0]).toMatchObject({ status: "valid", form: "spec" });
    const changed = { ...signed, "x-internal": { tier: "platinum" } };
    const check = await verifyAgentCard(changed, keysOf(pair));
    expect(check.signatures[0]).toMatchObject({ status: "invalid", diagnosis: "matches_no_form" });
  });
});

describe("cards of other versions keep their own payload", () => {
  it("0.3: the card as received, so an SDK (1.0) signature of it matches nothing", async () => {
    const pair = await keyPair("EdDSA");
    const { supportedInterfaces: _, ...rest } = with_({ securitySchemes: {} });
    const card = { ...rest, protocolVersion: "0.3.0", url: INTERFACE.url };
    const asReceived = await verifyAgentCard(
      await signedOver(card, pair, canonicalize(card)),
      keysOf(pair),
    );
    expect(asReceived.signatures[0]).toMatchObject({ status: "valid", form: "spec" });
    const bySdk = await verifyAgentCard(await sdkSignCard(card, pair), keysOf(pair));
    expect(bySdk.protocol_version).toBe("0.3");
    expect(bySdk.signatures[0]).toMatchObject({
      status: "invalid",
      message:
        "the signature does not match the canonical card: the card changed after it was " +
        "signed, or other bytes or another key were signed",
      diagnosis: "matches_no_form",
    });
  });

  it("no known version: the card as received", async () => {
    const pair = await keyPair("EdDSA");
    const { supportedInterfaces: _, ...card } = BASE;
    const check = await verifyAgentCard(
      await signedOver(card, pair, canonicalize(card)),
      keysOf(pair),
    );
    expect(check.status).toBe("invalid");
    expect(check.reasons.map((r) => r.code)).toEqual(["unknown_version"]);
    expect(check.signatures[0]).toMatchObject({
      status: "valid",
      message: "the signature verifies over the card as received",
      form: "received",
    });
  });
});

describe("any generated 1.0 card the SDK signs", () => {
  it("has a valid signature, and an invalid one once its name changed", async () => {
    const pair = await keyPair("EdDSA");
    await fc.assert(
      fc.asyncProperty(agentCard, async (generated) => {
        const card = JSON.parse(JSON.stringify(generated)) as Json;
        const signed = await sdkSignCard(card, pair);
        const check = await verifyAgentCard(signed, keysOf(pair), { version: "1.0" });
        expect(check.signatures).toEqual([
          expect.objectContaining({ status: "valid", form: expect.stringMatching(/^(spec|sdk)$/) }),
        ]);
        const renamed = { ...signed, name: `${String(card.name ?? "")}!` };
        const changed = await verifyAgentCard(renamed, keysOf(pair), { version: "1.0" });
        expect(changed.signatures).toEqual([
          expect.objectContaining({ status: "invalid", diagnosis: "matches_no_form" }),
        ]);
      }),
      { numRuns: 40 },
    );
  });
});
