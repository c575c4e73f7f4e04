import { type AgentCard, canonicalizeAgentCard } from "@a2a-js/sdk";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { canonicalize } from "#audit/canonical";
import { sdkForm, specForm } from "../../src/identity/agent-card-canonical";
import { agentCard, EXAMPLE, EXAMPLE_SDK, EXAMPLE_SPEC } from "../support/agent-cards";

type Json = Record<string, unknown>;

// The official SDK (@a2a-js/sdk, pinned) is the oracle for the SDK form. It runs here in Node
// beside the service's pure module; the Worker tests sign and verify with it end to end.
const sdk = (card: Json) => canonicalizeAgentCard(card as unknown as AgentCard);
const spec = (card: Json) => canonicalize(specForm(card));
const ours = (card: Json) => canonicalize(sdkForm(card).form);
/** What arrives over the wire: JSON, whatever the generator built. */
const received = (card: Json) => JSON.parse(JSON.stringify(card)) as Json;

describe("the A2A 1.0 §8.4.1 form", () => {
  it("is the specification's own example, to the byte", () => {
    // docs/specification.md §8.4.1, "Example of Default Value Removal".
    const fragment = {
      name: "Example Agent",
      description: "",
      capabilities: { streaming: false, pushNotifications: false, extensions: [] },
      skills: [],
    };
    expect(spec(fragment)).toBe(
      '{"capabilities":{"pushNotifications":false,"streaming":false},"description":"",' +
        '"name":"Example Agent","skills":[]}',
    );
  });

  it("keeps REQUIRED and optional fields, drops implicit defaults, keeps set messages", () => {
    expect(spec(EXAMPLE)).toBe(EXAMPLE_SPEC);
  });

  it("keeps every REQUIRED field and every optional one that is set, even at its default", () => {
    const flows = (flow: Json) => ({ oauth2SecurityScheme: { flows: flow } });
    const card = {
      name: "",
      description: "",
      supportedInterfaces: [{ url: "", protocolBinding: "", protocolVersion: "" }],
      provider: { url: "", organization: "" },
      version: "",
      documentationUrl: "",
      capabilities: { streaming: false, pushNotifications: false, extendedAgentCard: false },
      securitySchemes: {
        key: { apiKeySecurityScheme: { location: "", name: "" } },
        http: { httpAuthSecurityScheme: { scheme: "" } },
        code: flows({ authorizationCode: { authorizationUrl: "", tokenUrl: "", scopes: {} } }),
        client: flows({ clientCredentials: { tokenUrl: "", scopes: {} } }),
        device: flows({ deviceCode: { deviceAuthorizationUrl: "", tokenUrl: "", scopes: {} } }),
        oidc: { openIdConnectSecurityScheme: { openIdConnectUrl: "" } },
        mtls: { mtlsSecurityScheme: {} },
        none: {},
      },
      defaultInputModes: [],
      defaultOutputModes: [],
      skills: [{ id: "", name: "", description: "", tags: [] }],
      iconUrl: "",
    };
    expect(specForm(card)).toEqual(card);
  });

  it("drops an implicit field at its default at every level", () => {
    const card = {
      skills: [{ id: "s", examples: [], inputModes: [], securityRequirements: [] }],
      capabilities: { extensions: [{ uri: "", description: "", required: false }] },
      securitySchemes: {
        key: { apiKeySecurityScheme: { description: "", location: "header", name: "K" } },
        http: { httpAuthSecurityScheme: { scheme: "Bearer", bearerFormat: "" } },
        oauth: {
          oauth2SecurityScheme: {
            oauth2MetadataUrl: "",
            flows: { authorizationCode: { refreshUrl: "", pkceRequired: false, scopes: {} } },
          },
        },
      },
      securityRequirements: [{ schemes: {} }],
      provider: { url: "", organization: "" },
    };
    expect(specForm(card)).toEqual({
      skills: [{ id: "s" }],
      capabilities: { extensions: [{}] },
      securitySchemes: {
        key: { apiKeySecurityScheme: { location: "header", name: "K" } },
        http: { httpAuthSecurityScheme: { scheme: "Bearer" } },
        // scopes is REQUIRED in AuthorizationCodeOAuthFlow: an empty map stays.
        oauth: { oauth2SecurityScheme: { flows: { authorizationCode: { scopes: {} } } } },
      },
      securityRequirements: [{}],
      provider: { url: "", organization: "" },
    });
  });

  it("keeps list items, map entries and Struct contents as they are, and unknown fields", () => {
    const card = {
      defaultInputModes: ["", "text/plain"],
      securityRequirements: [{ schemes: { oidc: { list: [] }, key: { list: [""] } } }],
      capabilities: { extensions: [{ uri: "u", params: { a: "", b: null, c: [], d: {} } }] },
      "x-internal": { note: "" },
      icon_url: "https://agent.example.com/icon.png",
    };
    expect(specForm(card)).toEqual({
      defaultInputModes: ["", "text/plain"],
      securityRequirements: [{ schemes: { oidc: {}, key: { list: [""] } } }],
      capabilities: { extensions: [{ uri: "u", params: { a: "", b: null, c: [], d: {} } }] },
      "x-internal": { note: "" },
      // §5.5: JSON names are lowerCamelCase; the proto name is not a field of the JSON card.
      icon_url: "https://agent.example.com/icon.png",
    });
  });

  it("omits null (ProtoJSON's not set) and keeps a value of another type as it is", () => {
    const card = { documentationUrl: null, provider: null, version: 3, skills: "none" };
    expect(specForm(card)).toEqual({ version: 3, skills: "none" });
  });
});

describe("the official SDKs' form", () => {
  it("is the SDK's canonicalizeAgentCard for the documented example", () => {
    expect(sdk(EXAMPLE)).toBe(EXAMPLE_SDK);
    expect(ours(EXAMPLE)).toBe(EXAMPLE_SDK);
    expect(sdkForm(EXAMPLE).uncovered).toEqual(["securitySchemes.mtls"]);
  });

  it("equals the SDK's canonicalizeAgentCard for every generated card", () => {
    fc.assert(
      fc.property(agentCard, (generated) => {
        const card = received(generated);
        expect(ours(card)).toBe(sdk(card));
      }),
      { numRuns: 1000 },
    );
  });

  it("equals the SDK's for __proto__ keys, which the SDK's objects cannot hold", () => {
    const card = JSON.parse(
      '{"name":"N","__proto__":{"name":"M"},"securitySchemes":{"__proto__":' +
        '{"mtlsSecurityScheme":{"description":"d"}}},"capabilities":{"extensions":' +
        '[{"uri":"u","params":{"__proto__":{"a":1},"b":2}}]}}',
    );
    expect(ours(card)).toBe(sdk(card));
    expect(sdkForm(card).uncovered).toEqual([
      "capabilities.extensions[0].params.__proto__",
      "securitySchemes.__proto__",
      "__proto__",
    ]);
  });

  it("names what it leaves out: unknown fields, a second oneof member, empty entries", () => {
    const card = {
      "x-internal": 1,
      securitySchemes: {
        both: {
          httpAuthSecurityScheme: { scheme: "Bearer" },
          apiKeySecurityScheme: { location: "header", name: "K" },
        },
      },
      securityRequirements: [{ schemes: { both: { list: [""] } } }],
      documentation_url: "https://docs.example.com",
      documentationUrl: "https://docs.example.com/a2a",
    };
    expect(ours(card)).toBe(sdk(card));
    expect(sdkForm(card).uncovered).toEqual([
      "securitySchemes.both.httpAuthSecurityScheme",
      // One path for a whole entry left out, not one per level inside it.
      "securityRequirements[0]",
      "x-internal",
      "documentation_url",
    ]);
  });
});

describe("the two forms together", () => {
  it("§8.4.1 removes only what the SDKs remove too", () => {
    fc.assert(
      fc.property(agentCard, (generated) => {
        const card = received(generated);
        expect(ours(specForm(card))).toBe(ours(card));
      }),
      { numRuns: 300 },
    );
  });

  it("is idempotent in §8.4.1 form", () => {
    fc.assert(
      fc.property(agentCard, (generated) => {
        const once = specForm(received(generated));
        expect(spec(once)).toBe(canonicalize(once));
      }),
      { numRuns: 300 },
    );
  });
});
