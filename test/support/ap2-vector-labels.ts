import type { CredentialFailure } from "../../src/ap2-credentials/failures";

/** The vectors' reject labels and the failure each must get. */
export const FAILURE_OF_LABEL: Record<string, CredentialFailure> = {
  // The one label the verifier cannot tell apart from `cnf_signature`: a hop whose signature
  // fails under the key delegated to it was either altered or signed by another key, and no
  // check can say which. Like the root (`untrusted_issuer` for both), it is a delegation
  // failure; `signature_invalid` is for JWSs refused whoever signed them (docs/credentials.md).
  signature: "delegation_broken",
  cnf_signature: "delegation_broken",
  binding_sd_hash: "delegation_broken",
  truncated: "delegation_broken",
  untrusted_root: "untrusted_issuer",
  disclosure_digest: "disclosure_invalid",
  aud: "audience_mismatch",
  nonce: "nonce_mismatch",
  expired: "expired",
  iat_future: "not_yet_valid",
  constraint_amount: "constraint_violated",
  constraint_payee: "constraint_violated",
  constraint_merchant: "constraint_violated",
  constraint_line_items: "constraint_violated",
  checkout_hash: "constraint_violated",
};
