import { z } from "@hono/zod-openapi";
import { ACP_RISK_ACTIONS, ACP_RISK_SIGNAL_TYPES, RISK_TIERS } from "./vocabulary";

/**
 * The other rails' artefacts of one verdict (issue 42, docs/rails.md): each derived from the
 * stored outcome and signed after the commit, never part of the content hash.
 */

/**
 * x402's `RiskCheckResult` (x402-foundation/x402 PR #2422,
 * `typescript/packages/core/src/types/risk-check.ts`; `specs/extensions/risk-check.md`,
 * "Result Fields"), as this service fills it: a check was made, so every field is present.
 */
export const RiskCheckResult = z
  .object({
    checked: z.literal(true),
    score: z
      .int()
      .min(0)
      .max(100)
      .openapi({
        description:
          "x402's score: 0 = highest risk, 100 = safest. `100 - risk_score`, capped by the " +
          "decision (review at most 59, deny at most 29); docs/rails.md",
      }),
    tier: z.enum(RISK_TIERS).openapi({
      description: "x402's band of `score`: low 80–100, medium 60–79, high 30–59, critical 0–29",
    }),
    provider: z.string().openapi({ description: "The service's DID: `did:web:` its public host" }),
    categories: z.array(z.string()),
    jws: z.string().openapi({
      description:
        "Compact JWS (`typ` `risk-check+jwt`) over the claims `iss, sub, score, tier, iat, exp, " +
        "aud, categories, input_hash`; verify against `jwks_url`",
    }),
    jwks_url: z.string(),
    checked_at: z.string().openapi({ description: "The assessment's time (ISO 8601)" }),
    expires_at: z.string().openapi({ description: "The Risk Payload's `exp` (ISO 8601)" }),
  })
  .openapi("RiskCheckResult");
export type RiskCheckResult = z.infer<typeof RiskCheckResult>;

/** The claims of the x402 attestation (`specs/extensions/risk-check.md`, "JWS Claims"). */
export const RiskCheckClaims = z.object({
  iss: z.string(),
  sub: z.string(),
  score: z.int(),
  tier: z.enum(RISK_TIERS),
  iat: z.int(),
  exp: z.int(),
  aud: z.string().optional(),
  categories: z.array(z.string()),
  input_hash: z.string(),
});
export type RiskCheckClaims = z.infer<typeof RiskCheckClaims>;

/** x402's `RiskCheckDiscovery`, served at `/.well-known/risk-check.json`. */
export const RiskCheckDiscovery = z
  .object({
    name: z.string(),
    version: z.string(),
    description: z.string(),
    endpoint: z.string(),
    method: z.literal("POST"),
    signals: z.array(z.string()),
    attestation: z.object({
      jwks_url: z.string(),
      algorithm: z.string(),
      kid: z.string(),
      ttl: z.string(),
    }),
  })
  .openapi("RiskCheckDiscovery");
export type RiskCheckDiscovery = z.infer<typeof RiskCheckDiscovery>;

/**
 * ACP's `RiskSignal` (agentic-commerce-protocol `spec/2026-04-17/json-schema/
 * schema.delegate_payment.json`, `$defs.RiskSignal`).
 */
export const AcpRiskSignal = z
  .object({
    type: z.enum(ACP_RISK_SIGNAL_TYPES),
    score: z.int().openapi({ description: "The service's `risk_score`: higher is riskier" }),
    action: z.enum(ACP_RISK_ACTIONS),
  })
  .openapi("AcpRiskSignal");
export type AcpRiskSignal = z.infer<typeof AcpRiskSignal>;

/** The ACP artefact: `risk_signals` for a delegate-payment request, and their signature. */
export const AcpArtifact = z
  .object({
    risk_signals: z.array(AcpRiskSignal).openapi({
      description: "ACP `DelegatePaymentRequest.risk_signals`, ready to send as they are",
    }),
    jws: z.string().openapi({
      description:
        "Compact JWS (`typ` `acp-risk-signals+jwt`) over `iss, sub, iat, exp, aud, input_hash, " +
        "risk_signals`: what a PSP verifies against `jwks_url`",
    }),
    jwks_url: z.string(),
  })
  .openapi("AcpArtifact");
export type AcpArtifact = z.infer<typeof AcpArtifact>;

/** `artifacts` of an assess answer: only the ones the request named. */
export const Artifacts = z
  .object({ x402: RiskCheckResult.optional(), acp: AcpArtifact.optional() })
  .openapi("Artifacts", {
    description: "The artefacts the request named in `artifacts`, each signed (docs/rails.md)",
  });
export type Artifacts = z.infer<typeof Artifacts>;
