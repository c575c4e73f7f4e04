/**
 * Generated A2A 1.0 Agent Cards for property tests: every message of the card as a2a.proto
 * (v1.0.1) defines it, written out here by hand rather than read from the service's own table,
 * so that a field the table lacks is still generated. Each field is absent, null, at its default
 * ("", false, [], {}) or set; strings include odd Unicode; oneofs get zero, one or two members;
 * some fields come under their proto (snake_case) name, sometimes beside the JSON name; messages
 * carry fields outside the proto; extension params are free JSON. Every value has the JSON type
 * a2a.proto gives its field (a value of another type is a different question: see
 * agent-card-canonical.ts).
 */
import fc from "fast-check";

type Json = Record<string, unknown>;
type Arbs = Record<string, fc.Arbitrary<unknown>>;

const text = fc.oneof(
  { weight: 2, arbitrary: fc.constant("") },
  { weight: 5, arbitrary: fc.string({ maxLength: 8 }) },
  { weight: 1, arbitrary: fc.string({ unit: "binary", maxLength: 4 }) },
);
const url = fc.oneof(fc.constant(""), fc.webUrl());
const flag = fc.boolean();
const list = <T>(item: fc.Arbitrary<T>) => fc.array(item, { maxLength: 3 });
const map = <T>(value: fc.Arbitrary<T>) =>
  fc.dictionary(fc.string({ maxLength: 6 }), value, { maxKeys: 3 });
const struct = fc.dictionary(fc.string({ maxLength: 6 }), fc.jsonValue({ maxDepth: 3 }), {
  maxKeys: 4,
});

/** Absent, null (ProtoJSON's "not set") or a value. */
function field(value: fc.Arbitrary<unknown>): fc.Arbitrary<unknown> {
  return fc.oneof(
    { weight: 1, arbitrary: fc.constant(undefined) },
    { weight: 1, arbitrary: fc.constant(null) },
    { weight: 6, arbitrary: value },
  );
}

const snake = (name: string) => name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/**
 * Mostly the object as it is; else some members renamed to (or repeated under) their proto
 * name, and some unknown members added.
 */
function reshaped(object: Json): fc.Arbitrary<Json> {
  return fc.oneof(
    { weight: 4, arbitrary: fc.constant(object) },
    { weight: 1, arbitrary: unusual(object) },
  );
}

function unusual(object: Json): fc.Arbitrary<Json> {
  const aliased = Object.keys(object).filter((key) => snake(key) !== key);
  const extra = fc.dictionary(
    fc.string({ maxLength: 5 }).map((k) => `x-${k}`),
    fc.jsonValue({ maxDepth: 2 }),
    { maxKeys: 2 },
  );
  return fc
    .tuple(fc.subarray(aliased), fc.constantFrom("move", "copy"), fc.option(extra, { nil: {} }))
    .map(([renamed, how, unknown]) => {
      const out: Json = { ...object };
      for (const key of renamed) {
        out[snake(key)] = out[key];
        if (how === "move") delete out[key];
      }
      return { ...out, ...unknown };
    });
}

function message(fields: Arbs): fc.Arbitrary<Json> {
  const optional = Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, field(v)]));
  return fc
    .record(optional, { requiredKeys: [] })
    .map((o) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)))
    .chain(reshaped);
}

/** A oneof: none, one, or (which a proto parser refuses, and the SDKs resolve) two members. */
function oneof(members: Arbs): fc.Arbitrary<Json> {
  return fc
    .uniqueArray(fc.constantFrom(...Object.keys(members)), { maxLength: 2 })
    .chain((names) =>
      fc.record(Object.fromEntries(names.map((n) => [n, members[n] as fc.Arbitrary<unknown>]))),
    )
    .chain(reshaped);
}

const scopes = map(text);
const flows = oneof({
  authorizationCode: message({
    authorizationUrl: url,
    tokenUrl: url,
    refreshUrl: url,
    scopes,
    pkceRequired: flag,
  }),
  clientCredentials: message({ tokenUrl: url, refreshUrl: url, scopes }),
  implicit: message({ authorizationUrl: url, refreshUrl: url, scopes }),
  password: message({ tokenUrl: url, refreshUrl: url, scopes }),
  deviceCode: message({ deviceAuthorizationUrl: url, tokenUrl: url, refreshUrl: url, scopes }),
});
const securityScheme = oneof({
  apiKeySecurityScheme: message({ description: text, location: text, name: text }),
  httpAuthSecurityScheme: message({ description: text, scheme: text, bearerFormat: text }),
  oauth2SecurityScheme: message({ description: text, flows, oauth2MetadataUrl: url }),
  openIdConnectSecurityScheme: message({ description: text, openIdConnectUrl: url }),
  mtlsSecurityScheme: message({ description: text }),
});
const securityRequirement = message({ schemes: map(message({ list: list(text) })) });

/** An A2A 1.0 Agent Card, unsigned. */
export const agentCard: fc.Arbitrary<Json> = message({
  name: text,
  description: text,
  supportedInterfaces: list(
    message({
      url,
      protocolBinding: fc.oneof(fc.constantFrom("JSONRPC", "GRPC", "HTTP+JSON"), text),
      tenant: text,
      protocolVersion: fc.oneof(fc.constantFrom("1.0", "0.3"), text),
    }),
  ),
  provider: message({ url, organization: text }),
  version: text,
  documentationUrl: url,
  capabilities: message({
    streaming: flag,
    pushNotifications: flag,
    extensions: list(message({ uri: url, description: text, required: flag, params: struct })),
    extendedAgentCard: flag,
  }),
  securitySchemes: map(securityScheme),
  securityRequirements: list(securityRequirement),
  defaultInputModes: list(text),
  defaultOutputModes: list(text),
  skills: list(
    message({
      id: text,
      name: text,
      description: text,
      tags: list(text),
      examples: list(text),
      inputModes: list(text),
      outputModes: list(text),
      securityRequirements: list(securityRequirement),
    }),
  ),
  iconUrl: url,
});

/** docs/identity.md shows this card and its two payloads, written out by hand below. */
export const EXAMPLE: Json = {
  name: "Example Agent",
  description: "",
  supportedInterfaces: [
    {
      url: "https://agent.example.com/a2a",
      protocolBinding: "JSONRPC",
      protocolVersion: "1.0",
      tenant: "",
    },
  ],
  version: "1.0.0",
  documentationUrl: "",
  capabilities: { streaming: false, pushNotifications: false, extensions: [] },
  securitySchemes: { mtls: { mtlsSecurityScheme: {} } },
  securityRequirements: [],
  defaultInputModes: ["text/plain"],
  defaultOutputModes: ["text/plain"],
  skills: [{ id: "echo", name: "Echo", description: "Echoes.", tags: ["echo"], examples: [] }],
  signatures: [{ protected: "eyJhbGciOiJFZERTQSJ9", signature: "c2ln" }],
};
const COMMON =
  '"capabilities":{"pushNotifications":false,"streaming":false},' +
  '"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],';
const TAIL =
  '"skills":[{"description":"Echoes.","id":"echo","name":"Echo","tags":["echo"]}],' +
  '"supportedInterfaces":[{"protocolBinding":"JSONRPC","protocolVersion":"1.0",' +
  '"url":"https://agent.example.com/a2a"}],"version":"1.0.0"}';
export const EXAMPLE_SPEC =
  `{${COMMON}"description":"","documentationUrl":"","name":"Example Agent",` +
  `"securitySchemes":{"mtls":{"mtlsSecurityScheme":{}}},${TAIL}`;
export const EXAMPLE_SDK = `{${COMMON}"name":"Example Agent",${TAIL}`;
