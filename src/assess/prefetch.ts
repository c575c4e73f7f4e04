/**
 * What the assess path starts before its context read and lets run beside it, so none of it
 * is a sequential hop (docs/architecture.md, "The assess path"; ADR issue 42, point 4): the
 * network's query, the keyed digests of the checkout telemetry, the HTTP signer's directory,
 * and the status lists a credential names.
 */
import type { RootHeader } from "../ap2-credentials/issuers";
import type { Env } from "../env";
import { instrumentFingerprint, type NetworkQuery, networkQuery } from "../network/assess";
import { prefetchStatusLists, statusReferences } from "../status-lists/check";
import type { PresentedStatus } from "./credential-status";
import { directoryKeys } from "./http-signature/directory";
import { counterpartyKey, isPayment } from "./payment-keys";
import type { ParsedAssessRequest } from "./request";
import { telemetryDigests } from "./telemetry-store";

export interface Started {
  /** The network's digests to ask about in the context batch; null without network keys. */
  network: NetworkQuery | null;
  /** Keyed digests of the checkout telemetry, asked about in the context batch (docs/rails.md). */
  digests: Awaited<ReturnType<typeof telemetryDigests>>;
  /** The agent's HTTP request signature, when the request carries one. */
  signature: NonNullable<ParsedAssessRequest["httpSignature"]>["presented"] | null;
  /** The signer's `Signature-Agent` directory, in flight. */
  directory: ReturnType<typeof directoryKeys> | null;
  /** The credential's status references and their lists, in flight; null when none is named. */
  status: PresentedStatus | null;
}

export async function startBeside(
  env: Env,
  request: ParsedAssessRequest,
  thumbprint: string | null,
  credentialRoot: RootHeader | null | undefined,
  receivedAt: number,
): Promise<Started> {
  const signature = request.httpSignature?.presented ?? null;
  const directory = signature?.agent ? directoryKeys(env, signature.agent) : null;
  // None named, nothing runs.
  const references = request.credential ? statusReferences(request.credential.chain) : [];
  const status =
    references.length > 0
      ? { references, lists: prefetchStatusLists(env, references, receivedAt) }
      : null;
  const payment = isPayment(request);
  const network = networkQuery(
    env,
    {
      payee: payment ? counterpartyKey(request) : null,
      agentKey: thumbprint,
      instrument: payment ? instrumentFingerprint(request.mandate) : null,
    },
    credentialRoot,
  );
  const digests = await telemetryDigests(env, request.telemetry ?? null);
  return { network, digests, signature, directory, status };
}
