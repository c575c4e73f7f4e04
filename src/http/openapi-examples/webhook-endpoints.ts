// The webhook endpoint that received the assessments' events, and its deliveries.

import { ENDPOINT, list, type OperationExamples } from "./example-org";

const endpoint = {
  object: "webhook_endpoint",
  id: ENDPOINT,
  url: "https://hooks.acme.example/agent-risk",
  event_types: ["assessment.denied", "assessment.flagged", "assessment.resolved"],
  description: "Order service: hold and release orders",
  token_set: false,
  livemode: true,
  status: "enabled",
  disabled_reason: null,
  created: "2026-11-04T14:30:12.447Z",
  disabled_at: null,
  previous_secret_expires_at: null,
};

const deliveries = list([
  {
    object: "webhook_delivery",
    id: "01a1f868-2fae-7daa-a602-55004c346dc7",
    endpoint_id: ENDPOINT,
    event: {
      id: "01a1f868-2fae-7a4c-b1c6-faee1d218518",
      type: "assessment.denied",
      created: 1_795_168_939,
    },
    status: "succeeded",
    attempt_count: 2,
    attempts: [
      {
        number: 1,
        time: "2026-11-20T10:02:20.611Z",
        status_code: 503,
        duration_ms: 42,
        error: "status 503",
        next_retry_at: "2026-11-20T10:02:25.722Z",
      },
      {
        number: 2,
        time: "2026-11-20T10:02:25.730Z",
        status_code: 200,
        duration_ms: 37,
        error: null,
        next_retry_at: null,
      },
    ],
    next_attempt_at: null,
    dead_lettered_at: null,
    created: "2026-11-20T10:02:19.950Z",
    completed_at: "2026-11-20T10:02:25.767Z",
  },
  {
    object: "webhook_delivery",
    id: "01a1f85e-e14d-74a3-8103-9a89e4ac9227",
    endpoint_id: ENDPOINT,
    event: {
      id: "01a1f85e-e14d-7c10-a5d2-3e8f9b0c1d2e",
      type: "assessment.resolved",
      created: 1_795_168_330,
    },
    status: "succeeded",
    attempt_count: 1,
    attempts: [
      {
        number: 1,
        time: "2026-11-20T09:52:10.702Z",
        status_code: 200,
        duration_ms: 35,
        error: null,
        next_retry_at: null,
      },
    ],
    next_attempt_at: null,
    dead_lettered_at: null,
    created: "2026-11-20T09:52:10.061Z",
    completed_at: "2026-11-20T09:52:10.737Z",
  },
]);

export const webhookEndpointExamples: OperationExamples = {
  "POST /v1/webhook-endpoints": {
    ...endpoint,
    secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw4iuY2Eobd5s=",
  },
  "GET /v1/webhook-endpoints": list([endpoint]),
  "GET /v1/webhook-endpoints/{id}/deliveries": deliveries,
};
