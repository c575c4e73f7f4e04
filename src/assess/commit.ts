import type { Party } from "#audit/chain";
import type { ReviewOpening, ReviewSpend } from "../schemas/reviews";
import type { AssessmentRecord } from "./outcome";
import type { PersistPlan } from "./persist";

/**
 * What a fresh assessment asks of its org's ledger object: the second and last hop of the assess
 * path (docs/architecture.md, "The assess path"). The Worker has read the context and scored
 * the action; the ledger object decides what only it can decide one at a time per org (the
 * idempotency keys, a credential's single use and budget), signs the chosen verdict, sequences
 * the ledger entry and writes the assessment with it in its group commit.
 */

/** The verdict fields of the record: what the model decided, the claims that sign it. */
export type VerdictFields = Pick<
  AssessmentRecord,
  | "decision"
  | "risk_level"
  | "risk_score"
  | "reason"
  | "confidences"
  | "signals"
  | "rejection_reasons"
  | "credential"
>;

/** One verdict the ledger object may sign and store. */
export interface Verdict {
  fields: VerdictFields;
  /** The Risk Payload's claims for this verdict, exactly as they will be signed. */
  claims: Record<string, unknown>;
  events: PersistPlan["events"];
  /**
   * The AP2 Mandate Receipt's claims for this verdict, signed ES256 beside the Risk Payload;
   * null without a credential (docs/credentials.md, "The Mandate Receipt").
   */
  receipt: Record<string, unknown> | null;
}

/** The record as the Worker drafts it: everything but the verdict and what the ledger adds. */
export type RecordDraft = Omit<
  PersistPlan["record"],
  keyof VerdictFields | "jws" | "kid" | "latency_ms" | "mandate_receipt"
>;

/**
 * An approved payment under an AP2 open mandate, which the ledger object checks against what
 * it approved before under the same consent in the same mode: one consent pays once (the
 * consent and the transaction), and the open mandate's budget and recurrence hold across its
 * closed mandates. The terms are a review item's (`ReviewSpend`), so a person's approval is
 * judged like this one.
 */
export type CredentialSpend = ReviewSpend & {
  /** What is answered instead of the approval when the ledger refuses the spend. */
  instead: { already_consumed: Verdict; budget_exceeded: Verdict };
};

export interface AssessmentCommit {
  /** The content key and, when the caller gave one, its idempotency key (per mode). */
  once: string[];
  actor: Party;
  /** Epoch ms the request arrived: `latency_ms` runs from here to the signed verdict. */
  receivedAt: number;
  record: RecordDraft;
  mandate: PersistPlan["mandate"];
  inputs?: PersistPlan["inputs"];
  /** The shadow policy's would-be verdict: stored, never signed (docs/shadow-policies.md). */
  shadow?: PersistPlan["shadow"] | null;
  /** The shadow risk model's would-be answer: stored, never signed. */
  shadowModel?: PersistPlan["shadowModel"] | null;
  /** A payment's raw network identifiers: stored, never signed; absent for other kinds. */
  networkIds?: PersistPlan["networkIds"] | null;
  verdict: Verdict;
  spend: CredentialSpend | null;
  /**
   * The review item a `review` verdict opens, written in the same statement as the assessment
   * (docs/reviews.md); null for any other decision.
   */
  review: ReviewOpening | null;
  /** Test-suite faults the ledger object honours in ENVIRONMENT=test only (`persist`). */
  faults: string[];
}

export type CommitAnswer =
  /** Stored with its entry; `replayed` when an earlier commit under one of the keys made it. */
  | { kind: "stored"; record: AssessmentRecord; replayed: boolean; reviewId: string | null }
  /** The database refused it at the spending cap: nothing was stored, nothing was billed. */
  | { kind: "refused" }
  /** An earlier commit under one of the keys, whose answer the ledger no longer keeps. */
  | { kind: "expired"; assessmentId: string | null };

/** The record a verdict makes of a draft, once signed. */
export function signedRecord(
  draft: RecordDraft,
  verdict: Verdict,
  signature: { jws: string; kid: string; mandate_receipt: string | null },
  latencyMs: number,
): PersistPlan["record"] {
  return { ...draft, ...verdict.fields, ...signature, latency_ms: latencyMs };
}
