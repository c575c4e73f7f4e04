import type { RiskCheckDiscovery } from "../../schemas/rails";
import type { ArtifactKey } from "./artifacts";

/**
 * The x402 `risk-check` discovery document (x402-foundation/x402 PR #2422,
 * `specs/extensions/risk-check.md`, "Discovery"), served at `/.well-known/risk-check.json`.
 * `endpoint` is `POST /v1/assess`: the RiskCheckResult is its answer's `artifacts.x402` when
 * the request names `x402` (docs/rails.md); the PR leaves the endpoint's request to providers.
 */
export function riskCheckDiscovery(
  publicBaseUrl: string,
  key: Pick<ArtifactKey, "kid" | "alg">,
  ttlSeconds: number,
): RiskCheckDiscovery {
  return {
    name: "Agent Action Risk Assessment",
    version: "0.1.0",
    description:
      "Risk assessment of an AI agent's payment before it is made: the agent's identity, its " +
      "mandate and credential, the org's policy and the payment's history. Send the payment to " +
      'the endpoint with "artifacts": ["x402"]; the RiskCheckResult is artifacts.x402.',
    endpoint: "/v1/assess",
    method: "POST",
    signals: ["agent_identity", "mandate", "credential", "policy", "behavior", "payee", "network"],
    attestation: {
      jwks_url: `${publicBaseUrl}/.well-known/jwks.json`,
      algorithm: key.alg,
      kid: key.kid,
      ttl: duration(ttlSeconds),
    },
  };
}

/** A TTL as the PR's example writes one (`1h`): the largest unit that divides it. */
function duration(seconds: number): string {
  if (seconds % 3600 === 0) return `${seconds / 3600}h`;
  return seconds % 60 === 0 ? `${seconds / 60}m` : `${seconds}s`;
}
