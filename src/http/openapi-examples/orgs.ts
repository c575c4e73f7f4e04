// The org, and the caller as GET /v1/me reads it (its live API key).

import { apiKeyExample } from "./api-keys";
import { API_KEY, type OperationExamples, ORG } from "./example-org";

export const orgExamples: OperationExamples = {
  "GET /v1/me": {
    orgId: ORG,
    orgName: "Acme Checkout",
    actor: { type: "api_key", id: API_KEY, name: "checkout-service", mode: "live" },
    scopes: apiKeyExample.scopes,
    livemode: true,
  },
  "POST /v1/orgs": {
    object: "organization",
    id: ORG,
    name: "Acme Checkout",
    created: "2026-11-02T08:15:27.204Z",
    role: "owner",
  },
};
