import { payloadDigest } from "#audit/digest";
import type { Caller } from "../auth/caller";
import { newId } from "../lib/ids";
import type { NetworkOutcome } from "../schemas/assessments";
import type { AssessmentCommit, RecordDraft } from "./commit";
import type { credentialOf } from "./credential-status";
import { withoutServiceRiskData } from "./facts";
import type { httpSignatureOf } from "./http-signature/outcome";
import type { AssessContext } from "./input";
import { receiptReferences } from "./mandate-receipt";
import { counterpartyKey, isPayment, networkIdsOf } from "./payment-keys";
import { recheckTerms } from "./recheck-terms";
import type { ParsedAssessRequest } from "./request";
import { reviewOpening } from "./review-opening";
import type { Decision } from "./risk";
import type { RiskInput } from "./risk-model";
import type { riskStage } from "./risk-stage";
import { recordInputs } from "./rules/inputs";
import { type PayloadFacts, spendOf, verdictOf } from "./verdict";

// What the ledger object is asked to sign, sequence and store for a fresh assessment, built
// from what the pipeline found (src/assess/pipeline.ts): the record's draft, the facts every
// candidate verdict states, the chosen verdict, and what the same transaction writes beside
// it (the mandate, the rule inputs, the shadows, the network's identifiers, a spend, a review).
// Pure: no I/O, no clock but the `now` it is given.

/** What the pipeline knows once every stage has answered. */
export interface Assessment {
  request: ParsedAssessRequest;
  who: Caller;
  context: AssessContext;
  input: RiskInput;
  /** The request's idempotency hash (`content_hash`), per mode. */
  contentHash: string;
  /** The agent key's RFC 7638 thumbprint, when one was named. */
  thumbprint: string | null;
  /** The instant it is made at (its test clock's, else its arrival), and its arrival. */
  now: number;
  receivedAt: number;
  /** The service's public origin, and the Risk Payload's lifetime. */
  issuer: string;
  ttlSeconds: number;
  risk: ReturnType<typeof riskStage>;
  decision: Decision;
  /** The presented AP2 credential's verdict and outcome (null without a credential). */
  credential: Awaited<ReturnType<typeof credentialOf>> | null;
  httpSignature: Awaited<ReturnType<typeof httpSignatureOf>> | null;
  networked: NetworkOutcome | null;
  shadow: AssessmentCommit["shadow"];
  shadowModel: AssessmentCommit["shadowModel"];
  faults: ReadonlySet<string>;
}

/** The commit the ledger object receives for `a`, its verdict chosen and not yet signed. */
export function assessmentCommit(a: Assessment): AssessmentCommit {
  const { request, who, input, now } = a;
  const presented = request.credential;
  const verdict = a.credential?.verdict ?? null;
  const credential = a.credential?.credential ?? null;
  const id = newId(a.receivedAt);
  const mandateId = newId(a.receivedAt);
  const submitted = withoutServiceRiskData(request.mandate);
  const mandateHash = payloadDigest(submitted);
  const agent = input.identity.agent;
  const policyVersion = a.context.policy?.version ?? 0;
  const model = a.risk.model;
  const draft: RecordDraft = {
    id,
    created: new Date(now).toISOString(),
    livemode: who.livemode,
    kind: request.kind,
    mandate_type: request.mandateType,
    mandate_id: mandateId,
    content_hash: a.contentHash,
    idempotency_key: request.idempotencyKey,
    agent: agent
      ? { id: agent.id, trust_score: agent.trust_score, risk_tier: agent.risk_tier }
      : null,
    policy_version: policyVersion,
    verify_url: `${a.issuer}/.well-known/jwks.json`,
    a2a: request.a2a ? { ...request.a2a } : null,
    amount: request.facts.amount?.amount ?? null,
    currency: request.facts.amount?.currency ?? null,
    counterparty: counterpartyKey(request),
    ...(model
      ? { model: { id: model.id, version: model.version, probability: model.probability } }
      : {}),
    ...(a.networked ? { network: a.networked } : {}),
    ...(a.httpSignature ? { http_signature: a.httpSignature } : {}),
  };
  // What every verdict of this assessment states besides the decision itself.
  const facts: PayloadFacts = {
    issuer: a.issuer,
    audience: request.audience,
    orgId: who.orgId,
    livemode: who.livemode,
    assessmentId: id,
    mandateId,
    mandateHash,
    kind: request.kind,
    policyVersion,
    agentId: agent?.id ?? null,
    issuedAt: now,
    ttlSeconds: a.ttlSeconds,
    receipt: presented
      ? {
          issuer: a.issuer,
          issuedAt: now,
          assessmentId: id,
          references: receiptReferences(presented.chain),
        }
      : null,
    network: a.networked,
  };
  const chosen = verdictOf(a.decision, facts, credential, verdict?.detail ?? null);
  return {
    once: onceKeys(draft),
    actor: { type: who.actor.type, id: who.actor.id },
    receivedAt: a.receivedAt,
    record: draft,
    mandate: {
      id: mandateId,
      kind: request.kind,
      mandate_type: request.mandateType,
      vct: typeof submitted.vct === "string" ? submitted.vct : null,
      content_hash: a.contentHash,
      mandate_hash: mandateHash,
      mandate: submitted,
    },
    inputs: recordInputs(input),
    shadow: a.shadow,
    shadowModel: a.shadowModel,
    ...(isPayment(request)
      ? {
          networkIds: networkIdsOf(request, a.thumbprint, verdict?.issuerKeyThumbprint ?? null),
        }
      : {}),
    verdict: chosen,
    spend:
      verdict?.spend && chosen.fields.decision === "approve"
        ? spendOf(verdict, a.decision, facts, credential)
        : null,
    review:
      chosen.fields.decision === "review"
        ? reviewOpening(verdict, now, recheckTerms(verdict, input))
        : null,
    faults: [...a.faults],
  };
}

/**
 * The idempotency keys the ledger object arbitrates at once: the content, and the caller's key
 * (per mode). Whichever was used first names the assessment every later request gets.
 */
function onceKeys(draft: RecordDraft): string[] {
  const once = [`assessment:${draft.content_hash}`];
  if (draft.idempotency_key !== null) {
    once.push(`assessment-key:${draft.livemode ? "live" : "test"}:${draft.idempotency_key}`);
  }
  return once;
}
