import type { Tenant } from "../../auth/tenant";
import type { HttpSignatureOutcome } from "../../schemas/http-signature";
import type { AssessContext } from "../input";
import type { HttpSignatureEvidence } from "../risk-input";
import type { RiskInput } from "../risk-model";
import type { PresentedHttpSignature } from "./presented";
import { type DirectoryKeys, verifyHttpSignature } from "./verify";

/**
 * `outcome.http_signature` for a fresh assessment: the signature verified under the registered
 * key the context read found, else under the directory fetched beside the read. A registered key
 * does not wait for the directory: its fetch finishes after the response (and fills the cache).
 */
export async function httpSignatureOf(
  tenant: Tenant,
  presented: PresentedHttpSignature,
  directory: Promise<DirectoryKeys> | null,
  context: AssessContext,
  mandateKey: string | null,
  now: number,
): Promise<HttpSignatureOutcome> {
  const read = context.httpSignature;
  const registered = read?.key ?? null;
  if (registered && directory) tenant.later(directory);
  const card = context.cardHit?.card_status === "verified" ? context.cardHit : null;
  return verifyHttpSignature(presented, {
    registered,
    directory: registered || !directory ? null : await directory,
    nonceFresh: read?.nonce_fresh ?? null,
    now,
    targets: {
      mandateKey,
      mandateAgent: context.keyHit?.agent_id ?? null,
      cardAgent: card?.agent_id ?? null,
    },
  });
}

/** The model's input with what the HTTP signature proved; unchanged without one. */
export function withHttpSignature(
  input: RiskInput,
  outcome: HttpSignatureOutcome | null,
): RiskInput {
  if (outcome === null) return input;
  const evidence: HttpSignatureEvidence = {
    verified: outcome.verified,
    failure: outcome.failure ?? null,
    binding: outcome.agent_binding,
  };
  return { ...input, httpSignature: evidence };
}
