import { z } from "@hono/zod-openapi";

// The agent's HTTP message signature (RFC 9421) as `POST /v1/assess` takes it, and what the
// Outcome says of it (docs/http-signatures.md).

/** Why a presented signature did not verify (docs/http-signatures.md, "Failures"). */
export const HTTP_SIGNATURE_FAILURES = [
  "unknown_key",
  "key_revoked",
  "directory_unavailable",
  "unsupported_algorithm",
  "algorithm_mismatch",
  "unsupported_component",
  "signature_invalid",
  "expired",
  "not_yet_valid",
  "too_old",
  "nonce_replayed",
] as const;
export type HttpSignatureFailure = (typeof HTTP_SIGNATURE_FAILURES)[number];

/** Whether the HTTP key, the Agent Card's key and the mandate's `cnf` key are one agent's. */
export const AGENT_BINDINGS = ["same_key", "same_agent", "mismatch", "absent"] as const;
export type AgentBinding = (typeof AGENT_BINDINGS)[number];

/** Printable text of a header field value: no control characters (a line break would forge a base line). */
function fieldText(max: number) {
  return z
    .string()
    .max(max)
    .regex(/^[\x20-\x7e\t]*$/, "must be visible ASCII (an HTTP field value)");
}

export const HttpSignatureRequest = z
  .strictObject({
    signature: fieldText(8192).min(1).openapi({
      description: "The request's `Signature` field value (RFC 9421 §4.2), as received",
      example:
        "sig1=:uz2SAv+VIemw+Oo890bhYh6Xf5qZdLUgv6/PbiQfCFXcX/vt1A8Pf7OcgL2yUDUYXFtffNpkEr5W6dldqFrkDg==:",
    }),
    signature_input: fieldText(8192)
      .min(1)
      .openapi({
        description: "The request's `Signature-Input` field value (RFC 9421 §4.1), as received",
        example:
          'sig1=("@authority" "signature-agent");created=1735689600;expires=1735693200;' +
          'keyid="poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U";alg="ed25519";' +
          'nonce="e8N7S2MFd/qrd6T2R3tdfAuuANngKI7LFtKYI/vowzk4lAZYadIX6wW25MwG7DCT9RUKAJ0qVkU0mEeLElW1qg==";' +
          'tag="web-bot-auth"',
      }),
    signature_agent: fieldText(2048)
      .min(1)
      .optional()
      .openapi({
        description:
          "The request's `Signature-Agent` field value: where the signer's key directory is " +
          "(Web Bot Auth), fetched when the key is not one of the agent's registered keys",
        example: 'sig1="https://agent.example"',
      }),
    label: z
      .string()
      .regex(/^[a-z*][a-z0-9_\-.*]{0,63}$/, "must be a structured-field key")
      .optional()
      .openapi({
        description:
          "Which signature of the fields to verify; default: the first with a Web Bot Auth or " +
          "TAP tag, else the first",
      }),
    covered: z
      .strictObject({
        method: z
          .string()
          .regex(/^[!#$%&'*+\-.^_`|~0-9A-Za-z]{1,32}$/, "must be an HTTP method token")
          .openapi({ example: "GET" }),
        authority: z
          .string()
          .regex(/^[A-Za-z0-9.\-:[\]]{1,255}$/, "must be a host, with an optional port")
          .openapi({ example: "shop.example" }),
        path: z
          .string()
          .max(4096)
          .regex(/^\/[\x21-\x7e]*$/, "must be an absolute path without spaces")
          .default("/")
          .openapi({ example: "/checkout" }),
        query: z
          .string()
          .max(4096)
          .regex(/^[\x21-\x7e]*$/, "must be visible ASCII without the leading '?'")
          .optional(),
        scheme: z.enum(["https", "http"]).default("https"),
        headers: z
          .record(
            z.string().regex(/^[a-z0-9!#$%&'*+\-.^_`|~]{1,64}$/, "must be a lower-case field name"),
            fieldText(8192),
          )
          .default({})
          .refine((headers) => Object.keys(headers).length <= 32, "at most 32 header fields")
          .openapi({
            description:
              "The signed request's header fields that its signature covers, by lower-case name",
            example: { "signature-agent": 'sig1="https://agent.example"' },
          }),
      })
      .openapi({
        description:
          "The parts of the agent's request the signature covers (RFC 9421 §2): its method, " +
          "authority, path, query and scheme, and its header fields",
      }),
  })
  .openapi("HttpSignatureEvidence", {
    description:
      'The agent\'s own HTTP message signature (RFC 9421; Web Bot Auth `tag="web-bot-auth"`, ' +
      "Visa TAP `agent-browser-auth` / `agent-payer-auth`), as the merchant received it",
  });
export type HttpSignatureRequest = z.infer<typeof HttpSignatureRequest>;

export const HttpSignatureOutcome = z
  .object({
    verified: z.boolean(),
    label: z.string(),
    keyid: z.string().nullable(),
    tag: z.string().nullable(),
    alg: z
      .string()
      .nullable()
      .openapi({ description: "The RFC 9421 §6.2 algorithm verified with" }),
    key_thumbprint: z
      .string()
      .nullable()
      .openapi({ description: "RFC 7638 thumbprint of the key that verified; null when none" }),
    key_source: z
      .enum(["registered", "directory"])
      .nullable()
      .openapi({
        description:
          "Where the key came from: one of the org's registered agent keys, or the " +
          "`Signature-Agent` directory",
      }),
    agent_binding: z.enum(AGENT_BINDINGS).openapi({
      description:
        "Whether the HTTP key, the Agent Card's key and the mandate's `cnf` key belong to one " +
        "agent: `same_key`, `same_agent` (keys registered to one agent), `mismatch` (not shown " +
        "to be one agent: a high signal), `absent` (nothing verified, or nothing to bind to)",
    }),
    failure: z.enum(HTTP_SIGNATURE_FAILURES).optional(),
  })
  .openapi("HttpSignatureOutcome", {
    description:
      "What the agent's HTTP message signature proved (docs/http-signatures.md); absent when " +
      "the request carried none",
    example: {
      verified: true,
      label: "sig1",
      keyid: "poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U",
      tag: "web-bot-auth",
      alg: "ed25519",
      key_thumbprint: "poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U",
      key_source: "registered",
      agent_binding: "same_key",
    },
  });
export type HttpSignatureOutcome = z.infer<typeof HttpSignatureOutcome>;
