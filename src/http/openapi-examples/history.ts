// An import of payment history.

import { hashes, list, type OperationExamples } from "./example-org";

const historyImport = {
  id: "01a22689-7646-78bc-9aea-fa00a0403cf9",
  object: "history_import",
  livemode: true,
  created: "2026-11-20T09:01:12.646Z",
  records: 10_000,
  inserted: 9_940,
  unchanged: 60,
  labels: { fraud: 41, chargeback: 18, legitimate: 3, refund: 12 },
  first_occurred_at: "2026-05-01T00:03:11.000Z",
  last_occurred_at: "2026-06-14T23:58:40.000Z",
  digest: `sha256:${hashes.e}`,
  audit_entry_id: "01a22689-7652-7688-accc-77d8c4bd0b02",
};

export const historyExamples: OperationExamples = {
  "POST /v1/history/transactions": historyImport,
  "GET /v1/history/imports": list([historyImport]),
};
