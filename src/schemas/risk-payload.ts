import { z } from "@hono/zod-openapi";
import { REVIEW_REASONS } from "./reviews";
import { ACTION_KINDS, DECISIONS, RISK_LEVELS } from "./vocabulary";

// The claims of the signed Risk Payload (docs/assess.md, "The Risk Payload"). Not the body of
// any route: a relying party reads them out of `riskPayloadJws` (or a forwarded mandate's
// `risk_data["agent-risk"].jws`), so the schema is registered as an OpenAPI component of its
// own (src/app.ts) and the builders' output types are inferred from it (assess/risk-payload.ts,
// reviews/resolution.ts): what is signed and what is documented cannot drift apart.

const Party = z.object({ type: z.string(), id: z.string() });

export const RiskPayloadResolution = z
  .object({
    review_id: z.string(),
    status: z.enum(["resolved", "expired"]),
    reason: z.enum(REVIEW_REASONS),
    resolved_by: z.enum(["person", "api_key", "sla"]).openapi({
      description: "A person (a session), an API key, or the SLA sweep (`expired`)",
    }),
    resolver: Party.openapi({ description: "`user`, `api_key` or `system` and its id" }),
    resolved_at: z.string(),
    original_decision: z.literal("review"),
    original_jti: z.string().nullable().openapi({ description: "The first payload's `jti`" }),
    rechecked_at: z
      .string()
      .optional()
      .openapi({
        description:
          "On an approval of a verified AP2 credential's review: when the credential's issuer, " +
          "holder key, agent and time window were checked again and held (docs/reviews.md). " +
          "`mandate_verified` is true on a resolved payload only with it",
      }),
  })
  .openapi("RiskPayloadResolution", {
    description:
      "On the payload a review's resolution (or its expiry) signs, never on the first: " +
      "`decision` is then the human one (docs/reviews.md)",
  });

export const RiskPayloadClaims = z
  .object({
    iss: z.string().openapi({ description: "The service's public origin" }),
    sub: z.string().openapi({ description: "The assessment id" }),
    aud: z.string().optional().openapi({
      description: "Who will check the payload, when the request named an `audience`",
    }),
    iat: z.int(),
    exp: z.int().openapi({ description: "`iat` plus RISK_PAYLOAD_TTL_SECONDS (300 by default)" }),
    jti: z.string().openapi({ description: "The payload's own id: a new one per signature" }),
    livemode: z.boolean().openapi({
      description: "False for a test key's assessment: refuse it in production",
    }),
    log_id: z.string().openapi({
      description: "The assessing org's public transparency log id (never its internal id)",
    }),
    assessment_id: z.string(),
    mandate_id: z.string(),
    mandate_hash: z
      .string()
      .regex(/^sha256:[0-9a-f]{64}$/)
      .openapi({
        description:
          "`sha256:` + hex of the RFC 8785 form of the mandate as submitted, without the " +
          'service\'s own `risk_data["agent-risk"]`: the forwarded mandate must hash to it',
      }),
    kind: z.enum(ACTION_KINDS),
    decision: z.enum(DECISIONS),
    risk_score: z.int().min(0).max(100),
    risk_level: z.enum(RISK_LEVELS),
    policy_version: z.int(),
    agent_id: z.string().nullable(),
    credential_reference: z.string().nullable().openapi({
      description: "The verified AP2 credential's leaf reference; null without a credential",
    }),
    mandate_verified: z.boolean().openapi({
      description:
        "True only for a mandate taken from a verified AP2 credential; on a resolved payload, " +
        "only with `resolution.rechecked_at`",
    }),
    resolution: RiskPayloadResolution.optional(),
    status: z
      .object({
        status_list: z.object({
          idx: z.int().min(0),
          uri: z.string().openapi({ description: "`GET /v1/status-lists/{id}` of this service" }),
        }),
      })
      .optional()
      .openapi({
        description:
          "Where the verdict's status is published (draft-ietf-oauth-status-list §6.2): INVALID " +
          "once a review resolution or an erasure voids it (docs/status-lists.md). A resolved " +
          "payload carries none: it is final",
      }),
  })
  .openapi("RiskPayloadClaims", {
    description:
      "The claims of a Risk Payload: the payload of the compact JWS (EdDSA, `typ` " +
      "`risk-payload+jwt`) in `riskPayloadJws`, `outcome.risk_payload.jws`, a resolved " +
      "review's `risk_payload.jws` and a forwarded mandate's `risk_data[\"agent-risk\"].jws`. " +
      "Verify it against `/.well-known/jwks.json` (docs/assess.md)",
  });
export type RiskPayloadClaims = z.infer<typeof RiskPayloadClaims>;
export type RiskPayloadResolution = z.infer<typeof RiskPayloadResolution>;
