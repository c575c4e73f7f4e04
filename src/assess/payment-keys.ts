/**
 * What an assessment names its payee, agent key and issuer by, for history and for the network
 * (docs/network.md): keyed or plain digests, never the raw identifiers in an index.
 */
import { payloadDigest } from "#audit/digest";
import {
  instrumentFingerprint,
  type NetworkIds,
  type NetworkQuery,
  networkOutcome,
} from "../network/assess";
import type { NetworkOutcome } from "../schemas/assessments";
import type { AssessContext } from "./input";
import { counterpartyOf } from "./input";
import type { ParsedAssessRequest } from "./request";

/**
 * A payment, as the network counts it: its payee is a merchant. A message's or call's
 * recipient is a person, never a network identifier (docs/network.md).
 */
export function isPayment(request: ParsedAssessRequest): boolean {
  return request.kind === "ap2_payment";
}

/**
 * `outcome.network`: the network's answer for the request's digests and the issuer key that
 * verified the root; null without network keys or when the org's mode does not consume.
 */
export function networkOf(
  query: NetworkQuery | null,
  context: AssessContext,
  issuerKeyThumbprint: string | null,
): NetworkOutcome | null {
  if (query === null || context.network === undefined) return null;
  return networkOutcome(query, context.network, issuerKeyThumbprint);
}

/** What this payment can contribute to the network (`assessments.network_ids`), raw. */
export function networkIdsOf(
  request: ParsedAssessRequest,
  thumbprint: string | null,
  issuerKeyThumbprint: string | null,
): NetworkIds {
  return {
    agent_key: thumbprint,
    issuer_key: issuerKeyThumbprint,
    instrument: instrumentFingerprint(request.mandate),
  };
}

/**
 * The counterparty as history stores and matches it: a digest, so an identifier of any length
 * fits the index and the comparison stays exact.
 */
export function counterpartyKey(request: ParsedAssessRequest): string | null {
  const counterparty = counterpartyOf(request);
  return counterparty === null ? null : payloadDigest(counterparty);
}
