/** Why a session chain is broken: the reasons `session_chain_broken` and `/verify` name. */
export const BREAK_REASONS = [
  "sequence_gap",
  "link_mismatch",
  "hash_mismatch",
  "signature_required",
  "signature_malformed",
  "unknown_key",
  "key_not_of_agent",
  "agent_revoked",
  "key_revoked",
  "signature_invalid",
  // Only a re-verification of stored rows finds these.
  "missing_event",
  "key_mismatch",
  "head_mismatch",
  "signed_events_mismatch",
  "missing_batch",
  "ledger_mismatch",
] as const;
export type BreakReason = (typeof BREAK_REASONS)[number];
