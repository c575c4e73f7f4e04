/**
 * Why an AP2 credential chain is refused: the closed set of failure codes the verifier answers.
 * See docs/credentials.md for the rule behind each one.
 *
 * `already_consumed` and `budget_exceeded` are not here: they depend on what was approved
 * before, which only the org's Durable Object knows (see `spend.ts`).
 */
export const CREDENTIAL_FAILURES = [
  /** A JWS that is unacceptable whoever signed it: refused `alg`, `alg` not the key's, `crit`. */
  "signature_invalid",
  /** The root verifies under no active trust anchor (none matches, or the match does not verify). */
  "untrusted_issuer",
  /** A hop is not tied to the one before: wrong signer, binding hash, `typ`, `cnf`, chain shape. */
  "delegation_broken",
  /** A disclosure is malformed, unreferenced, duplicated, colliding, or the delegate item is not one. */
  "disclosure_invalid",
  "audience_mismatch",
  "nonce_mismatch",
  "expired",
  "not_yet_valid",
  /** The closed mandate is outside an open mandate's constraints (or unreadable for them). */
  "constraint_violated",
  /**
   * The root's open mandate does not disclose a constraint type its issuer requires
   * (`required_constraints`): the holder withheld a selectively disclosable one (AP2 #339).
   */
  "constraint_withheld",
  /**
   * A status list the root or a hop names says INVALID (draft-ietf-oauth-status-list §7.1):
   * decided by the status check after the chain verified (src/status-lists/check.ts), never by
   * `verifyChain`.
   */
  "revoked",
] as const;

export type CredentialFailure = (typeof CREDENTIAL_FAILURES)[number];

export interface FailureDetail {
  /**
   * For `constraint_violated`: the constraint (`payment.amount_range`, `preset.payee`, …); for
   * `constraint_withheld`: the first required type missing.
   */
  constraint?: string;
  message: string;
}

/**
 * Thrown inside the verifier by the step that refuses the chain, and turned into the verdict by
 * `verifyChain`; it never leaves the module.
 */
export class Refusal extends Error {
  constructor(
    readonly failure: CredentialFailure,
    readonly detail: FailureDetail,
  ) {
    super(detail.message);
  }
}

export function refuse(failure: CredentialFailure, message: string, constraint?: string): never {
  throw new Refusal(failure, constraint === undefined ? { message } : { constraint, message });
}
