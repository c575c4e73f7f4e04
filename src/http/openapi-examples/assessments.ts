// GET /v1/assessments, GET /v1/assessments/{id} and an assessment's feedback.

import {
  AGENT,
  AGENT_KEY,
  API_KEY,
  APPROVED,
  DENIED,
  list,
  type OperationExamples,
  PRINCIPAL,
  REVIEW,
  REVIEWED,
  riskPayload,
} from "./example-org";

const approvedOutcome = {
  object: "assessment",
  id: APPROVED,
  created: "2026-11-20T09:14:03.512Z",
  livemode: true,
  kind: "ap2_payment",
  outcome: {
    decision: "approve",
    risk_level: "normal",
    risk_score: 12,
    reason: "Approved: known agent within policy.",
    policy_version: 3,
    // The agent's own Web Bot Auth signature of its checkout request, made with the key its
    // mandate names (docs/http-signatures.md).
    http_signature: {
      verified: true,
      label: "sig1",
      keyid: AGENT_KEY,
      tag: "web-bot-auth",
      alg: "ecdsa-p256-sha256",
      key_thumbprint: AGENT_KEY,
      key_source: "registered",
      agent_binding: "same_key",
    },
  },
  confidences: {
    agent_identity: 1,
    mandate_validity: 1,
    policy_adherence: 1,
    behavioral_risk: 0.9,
    recipient_risk: 0.85,
  },
  signals: [],
  rejection_reasons: [],
  risk_payload: riskPayload,
  audit: { entry_id: "01a1f83b-fd8a-775a-aaaa-89b7fbddb38e", sequence: 57, status: "anchored" },
  refinement: null,
  agent: { id: AGENT, trust_score: 82, risk_tier: "low" },
  credential: {
    verified: true,
    reference: "RRs8AIeCNgXRl8DsBU9hmcq-DbD6P1tMSvjpQk62fNg",
    issuer: "01a1a0dc-1b52-7a3e-9c41-2f6d8e0b7a19",
    holder_thumbprint: AGENT_KEY,
    hops: 2,
    failure: null,
  },
  latency_ms: 21,
};

/** What an example summary adds to its decision: the transaction and who decided. */
interface SummaryParts {
  amount: number;
  payee: { id: string; name: string };
  transaction_id: string;
  decided_by: { type: string; rule: string | null; reviewer: string | null };
  review?: { id: string; status: string; decision: string | null } | null;
  credential?: { status: string; failure: string | null; reason: string | null } | null;
}

const summary = (
  id: string,
  created: string,
  decision: string,
  risk_level: string,
  risk_score: number,
  reason: string,
  agent_id: string | null,
  parts: SummaryParts,
) => ({
  id,
  object: "assessment",
  created,
  kind: "ap2_payment",
  livemode: true,
  decision,
  risk_level,
  risk_score,
  reason,
  agent_id,
  a2a: null,
  amount: parts.amount,
  currency: "USD",
  payee: parts.payee,
  transaction_id: parts.transaction_id,
  agent: agent_id === null ? null : { id: agent_id, name: "Office supplies buyer" },
  principal: agent_id === null ? null : { id: PRINCIPAL, name: "Northwind Traders", erased: false },
  model: null,
  credential: parts.credential ?? null,
  decided_by: parts.decided_by,
  review: parts.review ?? null,
});

/** The assessment held for review (the review examples show it resolved). */
export const reviewedSummary = summary(
  REVIEWED,
  "2026-11-20T09:31:47.208Z",
  "review",
  "elevated",
  55,
  "Review: the agent could not be identified.",
  null,
  {
    amount: 64_900,
    payee: { id: "acct_1Pq7sWLmZ2", name: "Globex Office Supply" },
    transaction_id: "tx_7b1d0c52e9",
    decided_by: { type: "score", rule: null, reviewer: null },
    review: { id: REVIEW, status: "open", decision: null },
  },
);

const assessmentList = list(
  [
    summary(
      DENIED,
      "2026-11-20T10:02:19.934Z",
      "deny",
      "highest",
      90,
      'Denied: policy rule "large-new-payee" matched (A first payment to a payee above 500.00).',
      AGENT,
      {
        amount: 215_000,
        payee: { id: "acct_9Xw2kQ", name: "Initech Hardware" },
        transaction_id: "tx_f3a9120c44",
        decided_by: { type: "rule", rule: "large-new-payee", reviewer: null },
      },
    ),
    reviewedSummary,
    summary(
      APPROVED,
      "2026-11-20T09:14:03.512Z",
      "approve",
      "normal",
      12,
      "Approved: known agent within policy.",
      AGENT,
      {
        amount: 19_900,
        payee: { id: "acct_1Pq7sWLmZ2", name: "Globex Office Supply" },
        transaction_id: "tx_2c88e01f7a",
        decided_by: { type: "score", rule: null, reviewer: null },
        credential: { status: "verified", failure: null, reason: null },
      },
    ),
  ],
  APPROVED,
);

const feedback = {
  id: "01a20910-7358-7c7a-b3f9-a429787dd623",
  object: "assessment_feedback",
  assessment_id: APPROVED,
  livemode: true,
  label: "chargeback",
  occurred_at: "2026-11-23T11:05:00.000Z",
  source: "stripe:dp_1QkR8mLqTz3nY6",
  note: "Cardholder disputed the charge as unauthorized.",
  created: "2026-11-23T15:40:02.776Z",
  created_by: { type: "api_key", id: API_KEY },
};

export const assessmentExamples: OperationExamples = {
  "GET /v1/assessments": assessmentList,
  "GET /v1/assessments/{id}": approvedOutcome,
  "POST /v1/assessments/{id}/feedback": feedback,
  "GET /v1/assessments/{id}/feedback": {
    ...list([feedback]),
    effective_label: "chargeback",
    pending: false,
  },
};
