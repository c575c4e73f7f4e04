/**
 * What a Payment Receipt binds to: "The hash of the closed Mandate that this receipt is binding
 * to" (`payment_receipt.json`, `reference`). An assessment of a credential knows its closed
 * mandate's two hashes (docs/credentials.md, "The Mandate Receipt"): AP2's `reference`, over the
 * final SD-JWT with its disclosures as `sd_hash` is computed (AP2 `specification.md`,
 * "Verification", "Dispute": "The Payment Receipt reference MUST match the hash of the closed
 * Payment Mandate. This is calculated in the same manner as the `sd_hash` would be"), and the
 * SDK's `closed_mandate_reference`, over the leaf JWS alone, which the SDK's own processor
 * samples put in their receipts. A receipt may carry either.
 */
import { decodeJwt } from "jose";
import { ApiError } from "../errors";
import type { RECEIPT_REFERENCE_MATCHES } from "../schemas/payment-receipts";

type ReferenceMatch = (typeof RECEIPT_REFERENCE_MATCHES)[number];

/** The assessment columns the references are read from. */
export interface ReferencedAssessment {
  /** The Outcome's `credential` (`reference`: the SDK's); null without a credential. */
  credential: unknown;
  /** The Mandate Receipt (compact JWS, the service's own): its `reference` is AP2's. */
  mandateReceipt: string | null;
}

function text(value: unknown): string | null {
  return typeof value === "string" && value !== "" ? value : null;
}

/** AP2's and the SDK's references of the assessment's closed mandate (either may be unknown). */
export function assessmentReferences(assessment: ReferencedAssessment): {
  reference: string | null;
  closedMandateReference: string | null;
} {
  let claims: Record<string, unknown> = {};
  if (assessment.mandateReceipt !== null) {
    try {
      claims = decodeJwt(assessment.mandateReceipt);
    } catch {
      // The service signed it; an unreadable one binds nothing.
    }
  }
  const credential = (assessment.credential ?? {}) as { reference?: unknown };
  const reference = text(claims.reference);
  return {
    reference,
    // The receipt omits `closed_mandate_reference` only when it equals `reference`.
    closedMandateReference:
      text(claims.closed_mandate_reference) ?? text(credential.reference) ?? reference,
  };
}

/**
 * Which of the assessment's references `reference` is, or 400 `receipt_reference_mismatch`
 * naming both (`at`: where the member is, `jws.payload.` for a signed receipt). Null when there
 * is nothing to bind to: an assessment without a credential, or one recorded before the service
 * kept a reference.
 */
export function referenceMatch(
  assessment: ReferencedAssessment,
  reference: string,
  at: string,
): ReferenceMatch | null {
  if (assessment.credential === null) return null;
  const known = assessmentReferences(assessment);
  if (known.reference === null && known.closedMandateReference === null) return null;
  if (reference === known.reference) return "reference";
  if (reference === known.closedMandateReference) return "closed_mandate_reference";
  const expected = [
    known.reference === null ? null : `${known.reference} (reference, AP2)`,
    known.closedMandateReference === null || known.closedMandateReference === known.reference
      ? null
      : `${known.closedMandateReference} (closed_mandate_reference, the SDK's)`,
  ].filter((one) => one !== null);
  throw new ApiError("receipt_reference_mismatch", [
    {
      path: `${at}reference`,
      message: `is not the hash of this assessment's closed mandate: expected ${expected.join(" or ")}`,
    },
  ]);
}
