import type { TrustAnchors } from "../ap2-credentials/hops";
import type { ChainVerdict } from "../ap2-credentials/verify";
import { checkStatus, type PrefetchedLists, type StatusReference } from "../status-lists/check";
import { credentialOutcome, type PresentedCredential, verifyPresented } from "./ap2-credential";
import type { CredentialEvidence } from "./risk-input";

/** A credential's status references and their lists, fetched beside the context read. */
export interface PresentedStatus {
  references: StatusReference[];
  lists: Promise<PrefetchedLists>;
}

/**
 * What a presented credential proves at `now`: its chain verified against the org's trust
 * anchors, then its status looked up (docs/credentials.md; docs/status-lists.md, "Checked").
 * The verdict, the evidence the risk model reads, and the outcome's `credential`.
 */
export async function credentialOf(
  presented: PresentedCredential,
  anchors: TrustAnchors | undefined,
  now: number,
  status: PresentedStatus | null,
  receivedAt: number,
) {
  const chained = await verifyPresented(presented, anchors, now);
  const checked = status
    ? await credentialStatus(chained, status.references, await status.lists, anchors, receivedAt)
    : null;
  const verdict = checked ? checked.verdict : chained;
  const evidence: CredentialEvidence = {
    verified: verdict.verified,
    failure: verdict.failure,
    detail: verdict.detail,
    ...(checked?.evidence ? { status: checked.evidence } : {}),
  };
  return { verdict, evidence, credential: credentialOutcome(verdict) };
}

/**
 * A verified chain's status (docs/status-lists.md, "Checked"): the lists its hops name, fetched
 * beside the context read, checked under the keys of the issuer that verified the root. INVALID
 * refuses the credential (`revoked`, which denies as `credential_revoked`); SUSPENDED and a
 * list that cannot be had are evidence the decision reads (review, the latter only when the
 * issuer requires status). A chain that did not verify is not looked up (§8.3: the token's own
 * validation comes first).
 */
export async function credentialStatus(
  verdict: ChainVerdict,
  references: StatusReference[],
  lists: PrefetchedLists,
  anchors: TrustAnchors | undefined,
  now: number,
): Promise<{ verdict: ChainVerdict; evidence: CredentialEvidence["status"] | null }> {
  if (!verdict.verified || references.length === 0) return { verdict, evidence: null };
  const keys = (anchors?.keys ?? [])
    .filter((anchor) => anchor.issuerId === verdict.issuerId)
    .map((anchor) => ({ kid: anchor.jwk.kid, jwk: anchor.jwk }));
  const finding = await checkStatus(references, lists, keys, now);
  if (finding.state === "valid") return { verdict, evidence: null };
  if (finding.state === "invalid") {
    return {
      verdict: {
        ...verdict,
        verified: false,
        failure: "revoked",
        detail: { message: finding.detail },
        spend: null,
        window: null,
      },
      evidence: null,
    };
  }
  const required = anchors?.statusRequired?.includes(verdict.issuerId ?? "") ?? false;
  return { verdict, evidence: { state: finding.state, required, detail: finding.detail } };
}
