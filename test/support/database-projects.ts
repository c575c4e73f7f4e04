/**
 * The Node test files that reach the database named by `DATABASE_URL` (the rest of `test/node`
 * never opens one). CI's PostgreSQL pass runs them with the Worker tests (project `node-db`),
 * not the whole Node project again; `test/node/database-projects.test.ts` keeps this list
 * equal to the files that read `DATABASE_URL`.
 */
export const NODE_DATABASE_TESTS = [
  "test/node/dev.test.ts",
  "test/node/migration-history.test.ts",
  "test/node/network-exclude.test.ts",
  "test/node/readme-walkthrough.test.ts",
  "test/node/sql-endpoint.test.ts",
];

/**
 * The Worker test files CI runs again on the PostgreSQL server (.ci/run; docs/ci.md, "The
 * PostgreSQL pass"). PGlite is PostgreSQL itself, so a file that sends one request at a time
 * runs the same statements the same way on both; what the server adds is concurrent sessions
 * (one connection per request, READ COMMITTED, row locks, unique-index races). So the pass runs
 * every file that sends requests at once (`test/node/database-projects.test.ts` keeps each
 * such file listed), and the files whose promise rests on isolation under concurrency: tenancy
 * (row-level security across orgs), consents and budgets (single use), and the network's
 * cross-org counts.
 */
export const POSTGRES_WORKER_TESTS = [
  "test/worker/action-authority.test.ts",
  "test/worker/action-decisions.test.ts",
  "test/worker/action-revocation.test.ts",
  "test/worker/agents.test.ts",
  "test/worker/api-keys.test.ts",
  "test/worker/artifacts.test.ts",
  "test/worker/assess.test.ts",
  "test/worker/assess-consent.test.ts",
  "test/worker/assess-credentials.test.ts",
  "test/worker/assess-faults.test.ts",
  "test/worker/assess-idempotency.test.ts",
  "test/worker/assess-kya.test.ts",
  "test/worker/assess-period-caps.test.ts",
  "test/worker/assess-policy.test.ts",
  "test/worker/assessment-commit.test.ts",
  "test/worker/assessments-read.test.ts",
  "test/worker/billing.test.ts",
  "test/worker/billing-guard.test.ts",
  "test/worker/commit-races.test.ts",
  "test/worker/console.test.ts",
  "test/worker/control-coverage.test.ts",
  "test/worker/credential-issuers.test.ts",
  "test/worker/credential-issuers-jwks.test.ts",
  "test/worker/error-envelope.test.ts",
  "test/worker/feedback.test.ts",
  "test/worker/history-import.test.ts",
  "test/worker/ledger.test.ts",
  "test/worker/ledger-commit.test.ts",
  "test/worker/ledger-recovery.test.ts",
  "test/worker/mandate-budgets.test.ts",
  "test/worker/network-assess.test.ts",
  "test/worker/network-contributions.test.ts",
  "test/worker/policies.test.ts",
  "test/worker/principals.test.ts",
  "test/worker/principals-erasure.test.ts",
  "test/worker/public.test.ts",
  "test/worker/rate-limits.test.ts",
  "test/worker/reviews.test.ts",
  "test/worker/risk-models.test.ts",
  "test/worker/sessions-append.test.ts",
  "test/worker/sessions-create.test.ts",
  "test/worker/shadow-policies.test.ts",
  "test/worker/status-list-erasure.test.ts",
  "test/worker/tenancy.test.ts",
  "test/worker/test-clocks.test.ts",
  "test/worker/webhooks-delivery.test.ts",
  "test/worker/webhooks-standard.test.ts",
];
