import type { ParsedChain } from "../ap2-credentials/chain";
import { UNKNOWN_CONSTRAINT } from "../ap2-credentials/constraints";
import { textDigest } from "../ap2-credentials/disclosures";
import type { FailureDetail } from "../ap2-credentials/failures";
import type { AssessedFailure, CredentialOutcome } from "./ap2-credential";

// The AP2 v0.2 Mandate Receipt (docs/ap2/agent_authorization.md, "Action Authorization"):
// "Upon acceptance or rejection of the Mandate, the Verifier MUST return a signed Mandate
// Receipt." The service is that Verifier for every assessment that presents a credential; the
// org's ledger object signs it (ES256, `signer.es256`) in the commit that signs the Risk
// Payload, so a replay answers the same bytes (docs/credentials.md, "The Mandate Receipt").

/** The JWS `typ` of a Mandate Receipt. */
export const MANDATE_RECEIPT_TYP = "ap2-mandate-receipt+jwt";

/** AP2's action-authorization error codes ("Errors", beside the receipt's definition). */
export const AP2_RECEIPT_ERRORS = [
  "invalid_credential",
  "unresolved_constraint",
  "invalid_mandate",
  "mandates_not_supported",
] as const;
export type Ap2ReceiptError = (typeof AP2_RECEIPT_ERRORS)[number];

/**
 * Every failure an assessment reports, as AP2's code (the table in docs/credentials.md): the
 * chain does not verify → `invalid_credential`; it verifies but does not approve this action →
 * `invalid_mandate`. A constraint type the service does not know is `unresolved_constraint`
 * (decided from the detail, see `ap2ErrorOf`). `mandates_not_supported` is never answered: a
 * mandate type the service does not assess is a 400 `unknown_mandate_type`, not an assessment.
 */
export const AP2_ERROR_OF_FAILURE: Record<AssessedFailure, Ap2ReceiptError> = {
  signature_invalid: "invalid_credential",
  untrusted_issuer: "invalid_credential",
  delegation_broken: "invalid_credential",
  disclosure_invalid: "invalid_credential",
  audience_mismatch: "invalid_credential",
  nonce_mismatch: "invalid_credential",
  expired: "invalid_credential",
  not_yet_valid: "invalid_credential",
  constraint_violated: "invalid_mandate",
  // The holder withheld a constraint the issuer requires disclosed (AP2 #339): what the
  // presentation shows cannot approve the action.
  constraint_withheld: "invalid_mandate",
  // A status list the chain names says INVALID: the Mandate no longer verifies.
  revoked: "invalid_credential",
  already_consumed: "invalid_mandate",
  budget_exceeded: "invalid_mandate",
};

/** AP2's code for a failure, with its detail: an unknown constraint type is unresolved. */
export function ap2ErrorOf(
  failure: AssessedFailure,
  detail?: FailureDetail | null,
): Ap2ReceiptError {
  if (failure === "constraint_violated" && detail?.message.startsWith(UNKNOWN_CONSTRAINT)) {
    return "unresolved_constraint";
  }
  return AP2_ERROR_OF_FAILURE[failure];
}

/** What a receipt binds to: the presented chain's two references. */
export interface ReceiptReferences {
  /**
   * AP2's `reference`: "a hash over the final SD-JWT in the chain … calculated in the same
   * manner as `sd_hash`": base64url SHA-256 of the last hop's `<JWS>~<d>~…~` as received
   * (`_sd_alg` other than sha-256 is refused by the verifier, so SHA-256 is the chain's).
   */
  reference: string;
  /**
   * The SDK's canonical receipt reference (`ap2/sdk/README.md`): base64url SHA-256 of the
   * closed (leaf) JWS alone, stable across delegation depth and disclosure choices.
   */
  closedMandateReference: string;
}

export function receiptReferences(chain: ParsedChain): ReceiptReferences {
  const last = chain.hops[chain.hops.length - 1];
  return {
    reference: textDigest(last?.segment ?? ""),
    closedMandateReference: textDigest(last?.jws ?? ""),
  };
}

export interface ReceiptFacts {
  /** `iss`: the service's PUBLIC_BASE_URL (the Verifier). */
  issuer: string;
  /** Epoch ms of the assessment (its test clock's under one). */
  issuedAt: number;
  assessmentId: string;
  references: ReceiptReferences;
}

/**
 * The claims of one verdict's Mandate Receipt: `result` `success` when the credential verified
 * (and the ledger object did not refuse its spend), else `error` with AP2's code and the
 * service's own failure as `error_description`. Use-case properties AP2 allows ("It MAY contain
 * additional use-case specific properties"): the assessment it answers, the SDK's reference
 * when it differs from AP2's, and the service's failure code.
 */
export function mandateReceiptClaims(
  facts: ReceiptFacts,
  credential: CredentialOutcome,
  detail: FailureDetail | null,
): Record<string, unknown> {
  const { reference, closedMandateReference } = facts.references;
  const failure = credential.verified ? null : (credential.failure as AssessedFailure | null);
  return {
    iss: facts.issuer,
    iat: Math.floor(facts.issuedAt / 1000),
    result: failure === null ? "success" : "error",
    reference,
    ...(failure === null
      ? {}
      : {
          error: ap2ErrorOf(failure, detail),
          error_description: `credential_${failure}${detail ? `: ${detail.message}` : ""}`,
        }),
    ...(closedMandateReference === reference
      ? {}
      : { closed_mandate_reference: closedMandateReference }),
    assessment_id: facts.assessmentId,
  };
}
