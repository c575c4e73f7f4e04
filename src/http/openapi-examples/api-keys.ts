// The org's live API key.

import { API_KEY, list, type OperationExamples, OWNER } from "./example-org";

export const apiKeyExample = {
  object: "api_key",
  id: API_KEY,
  name: "checkout-service",
  prefix: "aar_live_7Hq2",
  mode: "live",
  scopes: ["assess:write", "assess:read", "review:read", "webhooks:read"],
  status: "active",
  created: "2026-11-02T08:21:40.118Z",
  revoked_at: null,
  created_by: OWNER,
};

export const apiKeyExamples: OperationExamples = {
  "POST /v1/api-keys": {
    ...apiKeyExample,
    key: "aar_live_7Hq2oRKUafvshxWdss_-wpLkpkVKomyy40F2fME9Fjd",
  },
  "GET /v1/api-keys": list([apiKeyExample]),
};
