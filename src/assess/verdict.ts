import type { FailureDetail } from "../ap2-credentials/failures";
import type { ChainVerdict } from "../ap2-credentials/verify";
import { newId } from "../lib/ids";
import type { NetworkOutcome } from "../schemas/assessments";
import type { AssessmentEventData } from "../schemas/webhook-events";
import { type AssessedFailure, type CredentialOutcome, refusedDecision } from "./ap2-credential";
import type { CredentialSpend, Verdict, VerdictFields } from "./commit";
import { mandateReceiptClaims, type ReceiptFacts } from "./mandate-receipt";
import { spendTerms } from "./review-opening";
import type { Decision } from "./risk";
import { type RiskPayloadFacts, riskPayloadClaims } from "./risk-payload";

// A decision as the verdicts the org's ledger object may sign (docs/architecture.md, "The
// assess path"): the record's fields, the Risk Payload's claims and the events, and for a
// credential-backed approval the two verdicts it answers instead when it refuses the spend.

/**
 * What a Risk Payload states besides its verdict, its credential and its own id; when a
 * credential was presented, what its Mandate Receipt states besides its result; and
 * `outcome.network` (null when the org's mode does not consume), which the events carry and
 * the payload never signs.
 */
export type PayloadFacts = Omit<
  RiskPayloadFacts,
  "decision" | "riskScore" | "riskLevel" | "payloadId" | "credentialReference" | "mandateVerified"
> & { receipt: ReceiptFacts | null; network: NetworkOutcome | null };

/**
 * What approving a verified payment spends, for the ledger object to judge against what it
 * approved before under the same consent, and the verdicts it answers instead when it refuses.
 */
export function spendOf(
  verdict: ChainVerdict,
  decision: Decision,
  facts: PayloadFacts,
  credential: CredentialOutcome | null,
): CredentialSpend | null {
  const spend = verdict.spend;
  if (!spend || !credential) return null;
  const refused = (failure: AssessedFailure, description: string) =>
    verdictOf(
      refusedDecision(decision, failure, description),
      facts,
      { ...credential, verified: false, failure },
      { message: description },
    );
  return {
    ...spendTerms(spend),
    instead: {
      already_consumed: refused(
        "already_consumed",
        `transaction ${spend.transactionId} was already approved under this consent`,
      ),
      budget_exceeded: refused(
        "budget_exceeded",
        "this payment would take the open mandate past its budget, a period cap or its number of payments",
      ),
    },
  };
}

/**
 * A decision as a verdict the ledger object may sign: its record fields, claims, events and,
 * with a credential, its Mandate Receipt's claims (`detail`: why the credential failed).
 */
export function verdictOf(
  decision: Decision,
  facts: PayloadFacts,
  credential: CredentialOutcome | null,
  detail: FailureDetail | null = null,
): Verdict {
  const fields: VerdictFields = {
    decision: decision.decision,
    risk_level: decision.risk_level,
    risk_score: decision.risk_score,
    reason: decision.reason,
    confidences: decision.confidences,
    signals: decision.signals,
    rejection_reasons: decision.rejection_reasons,
    credential,
  };
  return {
    fields,
    claims: riskPayloadClaims({
      ...facts,
      credentialReference: credential?.reference ?? null,
      mandateVerified: credential?.verified ?? false,
      decision: fields.decision,
      riskScore: fields.risk_score,
      riskLevel: fields.risk_level,
      // Each verdict its own payload id: only the one the ledger object chooses is ever signed
      // into the record, and no two signed payloads share one.
      payloadId: newId(facts.issuedAt),
    }),
    events: eventsOf(facts, fields),
    receipt:
      credential && facts.receipt ? mandateReceiptClaims(facts.receipt, credential, detail) : null,
  };
}

/**
 * The verdict's events, all with one data: a receiver acting on `assessment.flagged` sees the
 * network's counts that weighed in without reading the assessment (docs/webhooks.md).
 */
function eventsOf(facts: PayloadFacts, fields: VerdictFields): Verdict["events"] {
  const data = {
    assessment_id: facts.assessmentId,
    decision: fields.decision,
    risk_level: fields.risk_level,
    risk_score: fields.risk_score,
    agent_id: facts.agentId,
    kind: facts.kind,
    ...(facts.network === null ? {} : { network: facts.network }),
  } satisfies AssessmentEventData;
  const types = ["assessment.completed"];
  if (fields.decision === "deny") types.push("assessment.denied");
  if (fields.decision === "review") types.push("assessment.flagged");
  return types.map((type) => ({ id: newId(), type, data }));
}
