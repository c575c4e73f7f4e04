import { canonicalize } from "./audit/canonical.js";

/** The namespace the service writes its Risk Payload under in a forwarded mandate's `risk_data`. */
export const RISK_DATA_NAMESPACE = "agent-risk";

/**
 * The `mandate_hash` a Risk Payload states for a mandate as it was forwarded to you:
 * `sha256:<hex>` of the RFC 8785 form without the service's own `risk_data["agent-risk"]`,
 * and without `risk_data` if that leaves it empty. WebCrypto alone.
 */
export async function mandateHash(forwarded: Record<string, unknown>): Promise<string> {
  const mandate: Record<string, unknown> = { ...forwarded };
  const riskData = mandate.risk_data;
  if (typeof riskData === "object" && riskData !== null && !Array.isArray(riskData)) {
    const { [RISK_DATA_NAMESPACE]: _ours, ...rest } = riskData as Record<string, unknown>;
    if (Object.keys(rest).length === 0) delete mandate.risk_data;
    else mandate.risk_data = rest;
  }
  const bytes = new TextEncoder().encode(canonicalize(mandate));
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  return `sha256:${Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("")}`;
}
