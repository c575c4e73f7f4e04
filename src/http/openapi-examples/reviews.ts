// The review queue: GET /v1/reviews, GET /v1/reviews/{id}, POST /v1/reviews/{id}/resolve.

import { reviewedSummary } from "./assessments";
import {
  list,
  type OperationExamples,
  OWNER,
  ownerParty,
  REVIEW,
  REVIEWED,
  riskPayload,
} from "./example-org";

const openReview = {
  object: "review",
  id: REVIEW,
  created: "2026-11-20T09:31:47.208Z",
  livemode: true,
  assessment_id: REVIEWED,
  agent_id: null,
  status: "open",
  expires_at: "2026-11-21T09:31:47.208Z",
  original_decision: "review",
  decision: null,
  reason: null,
  note: null,
  resolved_at: null,
  resolved_by: null,
  credential_backed: false,
  risk_payload: null,
  audit_entry_id: null,
  assessment: reviewedSummary,
};

const resolvedReview = {
  ...openReview,
  status: "resolved",
  decision: "approve",
  reason: "review.resolved",
  note: "Customer confirmed the order by phone.",
  resolved_at: "2026-11-20T09:52:10.044Z",
  resolved_by: ownerParty,
  risk_payload: riskPayload,
  audit_entry_id: "01a1f85e-e14d-70c7-b13b-1cd2dbfb6d9c",
  assessment: {
    ...reviewedSummary,
    decided_by: { type: "person", rule: null, reviewer: OWNER },
    review: { id: REVIEW, status: "resolved", decision: "approve" },
  },
};

export const reviewExamples: OperationExamples = {
  "GET /v1/reviews": list([resolvedReview]),
  "GET /v1/reviews/{id}": openReview,
  "POST /v1/reviews/{id}/resolve": resolvedReview,
};
