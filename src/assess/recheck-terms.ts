import type { ParsedChain, ParsedHop } from "../credentials/chain";
import { finiteNumber, own } from "../credentials/claims";
import { Refusal } from "../credentials/failures";
import { readHop } from "../credentials/hops";
import { isPinned, pinKey, thumbprint, verifiesUnder } from "../credentials/keys";
import type { ChainVerdict, TrustAnchors } from "../credentials/verify";
import type { ReviewRecheck } from "../schemas/reviews";
import type { RuleInput } from "./risk-input";

/**
 * What approving a review of a verified credential must find unchanged (docs/reviews.md,
 * "Re-checked on approval"), read while the chain is at hand: it is not stored. Null unless the
 * credential verified; null too if a term cannot be read, which no verified chain does (an item
 * without terms is refused approval, never approved unchecked).
 */
export async function recheckTerms(
  verdict: ChainVerdict | null,
  chain: ParsedChain | undefined,
  anchors: TrustAnchors | undefined,
  input: Pick<RuleInput, "identity" | "facts">,
): Promise<ReviewRecheck | null> {
  if (!verdict?.verified || !chain || !verdict.issuerId || !verdict.holderThumbprint) return null;
  const root = chain.hops[0];
  const rootKey = root ? await rootKeyOf(root, anchors, verdict.issuerId) : null;
  const window = windowOf(chain);
  if (rootKey === null || window === null) return null;
  return {
    issuer: verdict.issuerId,
    rootKey,
    holder: verdict.holderThumbprint,
    holderKey: input.identity.key ?? "unregistered",
    agentStatus: input.identity.agent?.status ?? null,
    ...window,
    mandateExpiresAt: input.facts.expiresAt,
  };
}

/**
 * The thumbprint of the issuer's key that verifies the root: the verdict names the issuer, not
 * its key. The verifier kept that success (`remember`), so this verifies nothing again.
 */
async function rootKeyOf(
  root: ParsedHop,
  anchors: TrustAnchors | undefined,
  issuerId: string,
): Promise<string | null> {
  for (const anchor of anchors?.keys ?? []) {
    if (anchor.issuerId !== issuerId) continue;
    const key = pinKey(anchor.jwk);
    if (isPinned(key) && (await verifiesUnder(root.jws, root.header, key, { remember: true }))) {
      return thumbprint(key);
    }
  }
  return null;
}

/**
 * The window every hop's claims and every mandate leave, as `checkValidity` reads them
 * (src/credentials/validity.ts): `iat` and `nbf` say when it opens, `exp` when it ends.
 */
function windowOf(chain: ParsedChain): Pick<ReviewRecheck, "notBefore" | "notAfter"> | null {
  let notBefore: number | null = null;
  let notAfter: number | null = null;
  for (const hop of chain.hops) {
    const reading = readHop(hop);
    if (reading instanceof Refusal) return null;
    for (const claims of [reading.claims, reading.mandate]) {
      for (const name of ["iat", "nbf"]) {
        const at = finiteNumber(own(claims, name));
        if (at !== undefined) notBefore = Math.max(notBefore ?? at, at);
      }
      const exp = finiteNumber(own(claims, "exp"));
      if (exp !== undefined) notAfter = Math.min(notAfter ?? exp, exp);
    }
  }
  return { notBefore, notAfter };
}
