/**
 * The fields of an A2A 1.0 Agent Card as the normative `specification/a2a.proto` defines them
 * (a2aproject/A2A, tag v1.0.1, messages AgentCard to DeviceCodeOAuthFlow; unchanged since
 * v1.0.0). Canonicalization needs three facts per field that JSON does not carry: whether it is
 * REQUIRED, whether it is declared `optional` (explicit presence), and whether it is a list, a
 * map or a message. Written here as one line per message, in the proto's declaration order
 * (the order decides which member of a oneof the official SDKs keep):
 *
 *   name:type    a proto3 field without a label: absent when it holds its default
 *   name:type!   `[(google.api.field_behavior) = REQUIRED]`
 *   name:type?   declared `optional`: present whenever it was set
 *   T[]  repeated     {T}  map<string, T>     Struct  google.protobuf.Struct (free JSON)
 *   oneof …      every field of the message is a member of its one oneof
 *
 * JSON names are the proto names in lowerCamelCase (A2A 1.0 §5.5); the proto (snake_case)
 * name is derived, since the SDKs also read it.
 */

const MESSAGES = {
  AgentCard:
    "name:string! description:string! supportedInterfaces:AgentInterface[]! " +
    "provider:AgentProvider version:string! documentationUrl:string? " +
    "capabilities:AgentCapabilities! securitySchemes:{SecurityScheme} " +
    "securityRequirements:SecurityRequirement[] defaultInputModes:string[]! " +
    "defaultOutputModes:string[]! skills:AgentSkill[]! iconUrl:string?",
  AgentInterface: "url:string! protocolBinding:string! tenant:string protocolVersion:string!",
  AgentProvider: "url:string! organization:string!",
  AgentCapabilities:
    "streaming:bool? pushNotifications:bool? extensions:AgentExtension[] extendedAgentCard:bool?",
  AgentExtension: "uri:string description:string required:bool params:Struct",
  AgentSkill:
    "id:string! name:string! description:string! tags:string[]! examples:string[] " +
    "inputModes:string[] outputModes:string[] securityRequirements:SecurityRequirement[]",
  SecurityRequirement: "schemes:{StringList}",
  StringList: "list:string[]",
  SecurityScheme:
    "oneof apiKeySecurityScheme:APIKeySecurityScheme " +
    "httpAuthSecurityScheme:HTTPAuthSecurityScheme oauth2SecurityScheme:OAuth2SecurityScheme " +
    "openIdConnectSecurityScheme:OpenIdConnectSecurityScheme " +
    "mtlsSecurityScheme:MutualTlsSecurityScheme",
  APIKeySecurityScheme: "description:string location:string! name:string!",
  HTTPAuthSecurityScheme: "description:string scheme:string! bearerFormat:string",
  OAuth2SecurityScheme: "description:string flows:OAuthFlows! oauth2MetadataUrl:string",
  OpenIdConnectSecurityScheme: "description:string openIdConnectUrl:string!",
  MutualTlsSecurityScheme: "description:string",
  OAuthFlows:
    "oneof authorizationCode:AuthorizationCodeOAuthFlow " +
    "clientCredentials:ClientCredentialsOAuthFlow implicit:ImplicitOAuthFlow " +
    "password:PasswordOAuthFlow deviceCode:DeviceCodeOAuthFlow",
  AuthorizationCodeOAuthFlow:
    "authorizationUrl:string! tokenUrl:string! refreshUrl:string scopes:{string}! " +
    "pkceRequired:bool",
  ClientCredentialsOAuthFlow: "tokenUrl:string! refreshUrl:string scopes:{string}!",
  ImplicitOAuthFlow: "authorizationUrl:string refreshUrl:string scopes:{string}",
  PasswordOAuthFlow: "tokenUrl:string refreshUrl:string scopes:{string}",
  DeviceCodeOAuthFlow:
    "deviceAuthorizationUrl:string! tokenUrl:string! refreshUrl:string scopes:{string}!",
} as const;

export type MessageName = keyof typeof MESSAGES;
type Scalar = "string" | "bool";

export interface ProtoField {
  /** The JSON name (lowerCamelCase). */
  json: string;
  /** The proto name, which ProtoJSON parsers (and the official SDKs) also accept. */
  proto: string;
  /** What one value is: a scalar, free JSON, or a message of the table. */
  type: Scalar | "Struct" | MessageName;
  shape: "single" | "repeated" | "map";
  /** `required`: REQUIRED; `optional`: declared optional; `implicit`: neither. */
  presence: "required" | "optional" | "implicit";
  /** A member of the message's oneof: it has explicit presence, and at most one is set. */
  oneof: boolean;
}

export interface ProtoMessage {
  fields: readonly ProtoField[];
  byJson: ReadonlyMap<string, ProtoField>;
}

const FIELD = /^([A-Za-z0-9]+):(\{)?([A-Za-z0-9]+)(\[\])?(\})?([!?])?$/;

function parseMessage(spec: string): ProtoMessage {
  const tokens = spec.split(" ");
  const oneof = tokens[0] === "oneof";
  const fields = (oneof ? tokens.slice(1) : tokens).map((token): ProtoField => {
    const match = FIELD.exec(token);
    if (!match) throw new Error(`agent-card-proto: cannot read ${token}`);
    const [, json = "", map, type = "", list, , mark] = match;
    return {
      json,
      proto: json.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`),
      type: type as ProtoField["type"],
      shape: map ? "map" : list ? "repeated" : "single",
      presence: mark === "!" ? "required" : mark === "?" ? "optional" : "implicit",
      oneof,
    };
  });
  return { fields, byJson: new Map(fields.map((f) => [f.json, f])) };
}

/** Every message an Agent Card can contain, by name. */
export const PROTO: Readonly<Record<MessageName, ProtoMessage>> = Object.fromEntries(
  Object.entries(MESSAGES).map(([name, spec]) => [name, parseMessage(spec)]),
) as Record<MessageName, ProtoMessage>;

export function isMessageType(type: ProtoField["type"]): type is MessageName {
  return Object.hasOwn(PROTO, type);
}
