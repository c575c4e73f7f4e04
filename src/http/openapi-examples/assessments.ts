// GET /v1/assessments, GET /v1/assessments/{id}, an assessment's feedback and its receipts.

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
  // Signed ES256 by the key set's P-256 key (docs/credentials.md, "The Mandate Receipt").
  mandate_receipt:
    "eyJhbGciOiJFUzI1NiIsImtpZCI6IjU2U0ZnMG5zd0ZQOE1IbE9Lc3doRHBjdXBqamxJUF9kSXlvYUY3R1gxWk0iLCJ0eXAiOiJhcDItbWFuZGF0ZS1yZWNlaXB0K2p3dCJ9.eyJpc3MiOiJodHRwczovL3Jpc2suZXhhbXBsZS5jb20iLCJpYXQiOjE3NjM2MzAwNDMsInJlc3VsdCI6InN1Y2Nlc3MiLCJyZWZlcmVuY2UiOiJ2M2M4a0FuRjFvS3hQcTJsSDFtV203cVoyY0RxWHIwWWIzYVo1c1Q4dUx3IiwiY2xvc2VkX21hbmRhdGVfcmVmZXJlbmNlIjoiUlJzOEFJZUNOZ1hSbDhEc0JVOWhtY3EtRGJENlAxdE1TdmpwUWs2MmZOZyIsImFzc2Vzc21lbnRfaWQiOiIwMWExZjgzYi1mZDc4LTcyMDgtOTc0YS0wNDdlODBkNThkNGYifQ.Pa6hTEwfsXDMj29ZAMsiFqfdonpMxA1beD-kEyDru6V5vNPE6mD_w4Rjgk-_3u1uzNmEVWuoeNTiLO9V5H_XuQ",
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

// The PSP's signed AP2 Payment Receipt of the approved payment, bound to its closed mandate by
// the SDK's reference, verified with the keys of the credential issuer it names
// (docs/credentials.md, "Payment receipts").
const receipt = {
  id: "01a1f83c-4e21-7b0d-8c55-63f0a1d2e9b7",
  object: "payment_receipt",
  assessment_id: APPROVED,
  livemode: true,
  status: "Success",
  iss: "https://psp.example",
  iat: 1795166071,
  reference: "RRs8AIeCNgXRl8DsBU9hmcq-DbD6P1tMSvjpQk62fNg",
  payment_id: "pay_7d1f0c5e9a",
  psp_confirmation_id: "psp_ch_3QkR8mLqTz",
  network_confirmation_id: "nw_58210377",
  error: null,
  error_description: null,
  jws: "eyJhbGciOiJFUzI1NiIsImtpZCI6InBzcC0yMDI2LTExIiwidHlwIjoiSldUIn0.eyJzdGF0dXMiOiJTdWNjZXNzIiwiaXNzIjoiaHR0cHM6Ly9wc3AuZXhhbXBsZSIsImlhdCI6MTc5NTE2NjA3MSwicmVmZXJlbmNlIjoiUlJzOEFJZUNOZ1hSbDhEc0JVOWhtY3EtRGJENlAxdE1TdmpwUWs2MmZOZyIsInBheW1lbnRfaWQiOiJwYXlfN2QxZjBjNWU5YSIsInBzcF9jb25maXJtYXRpb25faWQiOiJwc3BfY2hfM1FrUjhtTHFUeiIsIm5ldHdvcmtfY29uZmlybWF0aW9uX2lkIjoibndfNTgyMTAzNzcifQ.cMGAT2D8r2WLu-Yrd_UP_U6OqMcSLQ8643WBzGN--eCsIJ0klKIzUXEQMsp9BZNAtmPpLJZO_b7dwoIVveLiEw",
  verification: {
    status: "verified",
    reason: "issuer_signature",
    issuer_id: "01a1a0dd-7c30-7e58-b1a4-0e9d52c6f3a8",
  },
  reference_match: "closed_mandate_reference",
  created: "2026-11-20T09:14:32.118Z",
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
  "POST /v1/assessments/{id}/receipts": receipt,
  "GET /v1/assessments/{id}/receipts": list([receipt]),
};
