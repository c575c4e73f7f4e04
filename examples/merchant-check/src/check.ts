import {
  type AgentRiskClient,
  type KeySource,
  type RiskPayloadClaims,
  verifyRiskPayload,
} from "@agent-risk/client";

export interface CheckoutCheck {
  client: AgentRiskClient;
  /** The service's keys: its /.well-known/jwks.json URL, or the set itself. */
  keys: KeySource;
  /** The service's public origin, the payload's `iss`. */
  issuer: string;
  /** This merchant's identifier: the payload is requested for it and must name it. */
  merchantId: string;
  /**
   * What the agent presented at checkout: its AP2 credential (the SD-JWT delegation chain, with
   * the presentation it made to you), which the service verifies and can approve, or a decoded
   * mandate, whose claims nobody's signature proves (at best `review`).
   */
  presented: Presented;
  /** Accept a test-mode verdict: only while integrating with a test key. */
  allowTestMode?: boolean;
}

export type Presented =
  | { credential: string; presentation: { aud: string; nonce: string } }
  | { mandate: Record<string, unknown> };

export type CheckoutVerdict =
  | { proceed: true; claims: RiskPayloadClaims }
  | { proceed: false; claims: RiskPayloadClaims; reason: string };

/**
 * Assesses the mandate, then trusts only what the signed Risk Payload says, verified offline:
 * the answer's own `decision` field is never read. Anything but `approve` stops the checkout;
 * a failed call or a payload that does not verify throws, and a throw must stop it too.
 */
export async function checkMandate(check: CheckoutCheck): Promise<CheckoutVerdict> {
  const { data } = await check.client.POST("/v1/assess", {
    body: { ...check.presented, audience: check.merchantId },
  });
  const claims = await verifyRiskPayload(data.riskPayloadJws, {
    ...check.keys,
    issuer: check.issuer,
    audience: check.merchantId,
    maxAgeSeconds: 300,
    allowTestMode: check.allowTestMode === true,
  } as Parameters<typeof verifyRiskPayload>[1]);
  if (claims.decision === "approve") return { proceed: true, claims };
  // Why, in the service's words: the answer's `reason` explains the signed verdict and never
  // overrides it (it is not signed; the decision above is).
  return {
    proceed: false,
    claims,
    reason: `decision ${claims.decision}, score ${claims.risk_score}: ${data.outcome.outcome.reason}`,
  };
}
