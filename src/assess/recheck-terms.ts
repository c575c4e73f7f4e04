import type { ChainVerdict } from "../ap2-credentials/verify";
import type { ReviewRecheck } from "../schemas/reviews";
import type { RuleInput } from "./risk-input";

/**
 * What approving a review of a verified credential must find unchanged (docs/reviews.md,
 * "Re-checked on approval"), read while the verdict is at hand: the chain is not stored. Null
 * unless the credential verified (an item without terms is refused approval, never approved
 * unchecked).
 */
export function recheckTerms(
  verdict: ChainVerdict | null,
  input: Pick<RuleInput, "identity" | "facts">,
): ReviewRecheck | null {
  if (!verdict?.verified || !verdict.window) return null;
  const { issuerId, issuerKeyThumbprint, holderThumbprint } = verdict;
  if (!issuerId || !issuerKeyThumbprint || !holderThumbprint) return null;
  return {
    issuer: issuerId,
    rootKey: issuerKeyThumbprint,
    holder: holderThumbprint,
    holderKey: input.identity.key ?? "unregistered",
    agentStatus: input.identity.agent?.status ?? null,
    ...verdict.window,
    mandateExpiresAt: input.facts.expiresAt,
  };
}
