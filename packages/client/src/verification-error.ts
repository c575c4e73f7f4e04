/**
 * Why a signed object was refused. `code` is stable for programs (`signature_invalid`,
 * `expired`, `claim_invalid`, `timestamp_out_of_window`, `header_missing`, `key_unavailable`,
 * `malformed`); the message is for people.
 */
export class VerificationError extends Error {
  override readonly name = "VerificationError";

  constructor(
    readonly code: VerificationErrorCode,
    message: string,
  ) {
    super(message);
  }
}

export type VerificationErrorCode =
  | "signature_invalid"
  | "expired"
  | "claim_invalid"
  | "timestamp_out_of_window"
  | "header_missing"
  | "key_unavailable"
  | "malformed"
  | "test_mode";
