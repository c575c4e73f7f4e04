// The remaining-budget attestation: GET /v1/mandate-budgets/{reference}.

import type { OperationExamples } from "./example-org";

const mandateBudget = {
  object: "mandate_budget",
  reference: "qj2Yb3Tn0d1uVX8h1cW8cQ2cO2v9mJ4l3i9bq1Yt2kE",
  livemode: true,
  currency: "CAD",
  max_amount: 50000,
  spent: 12000,
  remaining: 38000,
  uses: 3,
  max_uses: 12,
  periods: [
    {
      period: "MONTHLY",
      start: "2026-11-01T00:00:00.000Z",
      end: "2026-12-01T00:00:00.000Z",
      max_total: 20000,
      spent: 12000,
      remaining: 8000,
    },
  ],
  issued_at: "2026-11-20T09:31:47.000Z",
  expires_at: "2026-11-20T09:36:47.000Z",
  jws:
    "eyJhbGciOiJFUzI1NiIsImtpZCI6IjNrOUQ2TEM1WFpXU2V2UFBVcVpQSlE0T1pvRUpOLUdwVE1rRkF2VlhfVHciLCJ0eXAiOiJtYW5kYXRlLWJ1ZGdldCtqd3QifQ" +
    ".eyJyZWZlcmVuY2UiOiJxajJZYjNUbjBkMXVWWDhoMWNXOGNRMmNPMnY5bUo0bDNpOWJxMVl0MmtFIn0" +
    ".MEUCIQDtQ5l3c2lnbmF0dXJlLWV4YW1wbGUtb25seS1ub3QtdmFsaWQtYnl0ZXMtaGVyZQ",
};

export const mandateBudgetExamples: OperationExamples = {
  "GET /v1/mandate-budgets/{reference}": mandateBudget,
};
