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
