// The x402 and ACP artefacts of an assessment, and x402's discovery document (docs/rails.md).

import type { OperationExamples } from "./example-org";

const JWKS_URL = "https://risk.example.com/.well-known/jwks.json";
const ES256_KID = "Zt3qN7cV1xW8yB2mK5pL9sR4hJ6dF0gA3eC7uI1oQwE";
/** Shortened compact JWS: `{"alg":"ES256","kid":…,"typ":"risk-check+jwt"}`, claims, signature. */
const RISK_CHECK_JWS =
  "eyJhbGciOiJFUzI1NiIsImtpZCI6Ilp0M3FON2NWMXhXOHlCMm1LNXBMOXNSNGhKNmRGMGdBM2VDN3VJMW9Rd0UiLCJ0eXAiOiJyaXNrLWNoZWNrK2p3dCJ9.eyJzdWIiOiIuLi4ifQ.c2ln";
const ACP_JWS =
  "eyJhbGciOiJFUzI1NiIsImtpZCI6Ilp0M3FON2NWMXhXOHlCMm1LNXBMOXNSNGhKNmRGMGdBM2VDN3VJMW9Rd0UiLCJ0eXAiOiJhY3Atcmlzay1zaWduYWxzK2p3dCJ9.eyJzdWIiOiIuLi4ifQ.c2ln";

/** The approved example assessment (risk_score 12) as x402 states it: 88, `low`. */
export const riskCheckResult = {
  checked: true,
  score: 88,
  tier: "low",
  provider: "did:web:risk.example.com",
  categories: ["identity", "behavioral"],
  jws: RISK_CHECK_JWS,
  jwks_url: JWKS_URL,
  checked_at: "2026-11-20T09:14:03.000Z",
  expires_at: "2026-11-20T09:19:03.000Z",
};

export const acpArtifact = {
  risk_signals: [{ type: "card_testing", score: 12, action: "authorized" }],
  jws: ACP_JWS,
  jwks_url: JWKS_URL,
};

export const railExamples: OperationExamples = {
  "GET /v1/assessments/{id}/artifacts/x402": riskCheckResult,
  "GET /v1/assessments/{id}/artifacts/acp": acpArtifact,
  "GET /.well-known/risk-check.json": {
    name: "Agent Action Risk Assessment",
    version: "0.1.0",
    description:
      "Risk assessment of an AI agent's payment before it is made: the agent's identity, its " +
      "mandate and credential, the org's policy and the payment's history. Send the payment to " +
      'the endpoint with "artifacts": ["x402"]; the RiskCheckResult is artifacts.x402.',
    endpoint: "/v1/assess",
    method: "POST",
    signals: ["agent_identity", "mandate", "credential", "policy", "behavior", "payee", "network"],
    attestation: { jwks_url: JWKS_URL, algorithm: "ES256", kid: ES256_KID, ttl: "5m" },
  },
};
