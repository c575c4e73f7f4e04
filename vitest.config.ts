import { fileURLToPath } from "node:url";
import { cloudflareTest } from "@cloudflare/vitest-pool-workers";
import { defineConfig } from "vitest/config";
import { localDatabaseUrl } from "./scripts/local-keys.ts";
import { NODE_DATABASE_TESTS } from "./test/support/database-projects.ts";

// Tests and examples import the client package by name; they get its source, never a stale
// dist/ (the packed build is checked by packages/client/test/pack.test.ts).
const clientSource = (path: string) =>
  fileURLToPath(new URL(`./packages/client/src/${path}`, import.meta.url));
const alias = [
  { find: /^@agent-risk\/client$/, replacement: clientSource("index.ts") },
  { find: /^@agent-risk\/client\/audit$/, replacement: clientSource("audit/index.ts") },
];

// The Node tests' settings, split in two projects only so CI can rerun the database half.
const nodeTests = { environment: "node", testTimeout: 30_000, hookTimeout: 60_000 } as const;

export default defineConfig({
  resolve: { alias },
  test: {
    projects: [
      {
        extends: true,
        test: {
          name: "client",
          include: ["packages/client/test/**/*.test.ts"],
          environment: "node",
          testTimeout: 60_000,
        },
      },
      {
        extends: true,
        test: {
          ...nodeTests,
          name: "node",
          include: ["test/node/**/*.test.ts"],
          exclude: NODE_DATABASE_TESTS,
        },
      },
      {
        // The Node tests that reach DATABASE_URL's database: CI's PostgreSQL pass runs these
        // with the Worker tests (test/support/database-projects.ts).
        extends: true,
        test: { ...nodeTests, name: "node-db", include: NODE_DATABASE_TESTS },
      },
      {
        // Headless Chromium against `npm run dev` (docs/browser-tests.md): one service for the
        // project, started by its setup; skipped loudly without Chromium, never under CI.
        extends: true,
        test: {
          name: "browser",
          include: ["test/browser/**/*.test.ts"],
          environment: "node",
          globalSetup: ["./test/browser/support/global-setup.ts"],
          testTimeout: 120_000,
          hookTimeout: 60_000,
        },
      },
      {
        extends: true,
        // The pre-bundled dependencies below (deps.optimizer) are written to this project's
        // cache directory. CI runs the project in three processes at once on a fresh clone
        // (two PGlite shards, and PostgreSQL with DATABASE_URL: .ci/run), and two processes
        // committing one directory race (a rename onto a non-empty directory fails): each
        // names its own with TEST_PASS; by hand, a PostgreSQL run beside a PGlite one works too.
        cacheDir: process.env.TEST_PASS
          ? `node_modules/.vite/${process.env.TEST_PASS}`
          : process.env.DATABASE_URL
            ? "node_modules/.vite/postgres"
            : undefined,
        plugins: [
          cloudflareTest(async ({ inject }) => {
            const idp = JSON.parse(inject("idp"));
            return {
              main: "./workers/main.ts",
              wrangler: { configPath: "./wrangler.toml" },
              miniflare: {
                bindings: {
                  ENVIRONMENT: "test",
                  // Tests anchor explicitly; no alarm may add a checkpoint in the middle of one.
                  LEDGER_ANCHOR_DELAY_MS: "3600000",
                  DATABASE_URL: localDatabaseUrl(inject("sqlEndpoint")),
                  LOCAL_SQL_ENDPOINT: "true",
                  // Tests reach the database as the owner too, to tamper and to check RLS.
                  TEST_OWNER_DATABASE_URL: localDatabaseUrl(inject("sqlEndpoint"), "owner"),
                  SIGNING_KEY: inject("signingKey"),
                  SIGNING_KEY_ES256: inject("signingKeyEs256"),
                  // Not the tests' request host (https://risk.test): every URL the service
                  // publishes must come from here, and the suite would notice one that did not.
                  PUBLIC_BASE_URL: "https://risk-service.test",
                  PRINCIPAL_MASTER_KEY: inject("principalMasterKey"),
                  NETWORK_KEYS: inject("networkKeys"),
                  // A real HTTP server on loopback that serves what the tests publish.
                  TEST_FIXTURE_URL: inject("fixtureServer"),
                  // Scale measurements (seeding 10,000 rows) run only when asked: a benchmark,
                  // not a timed test of every CI run (docs/ci.md).
                  TEST_SCALE: process.env.TEST_SCALE ?? "",
                  // Stripe cannot be reached: a fake at the network edge, on the fixture server.
                  STRIPE_API_BASE: `${inject("fixtureServer")}/stripe`,
                  STRIPE_SECRET_KEY: inject("stripeSecretKey"),
                  STRIPE_WEBHOOK_SECRET: inject("stripeWebhookSecret"),
                  // Retries a second apart: a whole delivery schedule runs in a few seconds.
                  WEBHOOK_RETRY_SCHEDULE: "1,1,1",
                  // Backtests read pages of 2: the suite's short histories cross pages.
                  TEST_BACKTEST_PAGE_SIZE: "2",
                  // What a test writes is contributed to the network at once, not 10 s later.
                  TEST_NETWORK_SETTLE_SECONDS: "0",
                  IDP_ISSUER: idp.issuer,
                  IDP_AUDIENCE: idp.audience,
                  IDP_JWKS: JSON.stringify(idp.jwks),
                  // Only the tests hold the identity provider's private key, to mint sessions.
                  TEST_IDP_PRIVATE_JWK: JSON.stringify(idp.privateJwk),
                },
                // The suite must never be throttled by accident: every door far above what any
                // test sends. The limiter itself is tested with the small TEST_RATE_LIMIT,
                // swapped in for one door (test/worker/rate-limits.test.ts).
                ratelimits: {
                  RATE_LIMIT_ASSESS: { simple: { limit: 1_000_000, period: 10 } },
                  RATE_LIMIT_WRITE: { simple: { limit: 1_000_000, period: 10 } },
                  RATE_LIMIT_EXPENSIVE: { simple: { limit: 1_000_000, period: 60 } },
                  RATE_LIMIT_PUBLIC: { simple: { limit: 1_000_000, period: 60 } },
                  RATE_LIMIT_FAILED_AUTH: { simple: { limit: 1_000_000, period: 60 } },
                  TEST_RATE_LIMIT: { simple: { limit: 20, period: 60 } },
                  // wrangler.toml's RATE_LIMIT_PUBLIC (test/node/rate-limit-config.test.ts).
                  TEST_RATE_LIMIT_PUBLIC: { simple: { limit: 300, period: 60 } },
                },
              },
            };
          }),
        ],
        test: {
          name: "workers",
          include: ["test/worker/**/*.test.ts"],
          // vitest-pool-workers inlines every dependency: each module is one round trip from
          // workerd to Vite, for every test file. Pre-bundled, a package (and each subpath the
          // app imports) is one module: a file's imports went from 4.4 s to 3.4 s (docs/ci.md).
          // Stripe, oauth4webapi and standardwebhooks also publish maps naming sources they do
          // not ship, and Vite warned once per file without this.
          deps: {
            optimizer: {
              ssr: {
                enabled: true,
                include: [
                  "stripe",
                  "oauth4webapi",
                  "standardwebhooks",
                  "zod",
                  "hono",
                  "@hono/zod-openapi",
                  "jose",
                  "drizzle-orm",
                  "drizzle-orm/pg-core",
                  "drizzle-orm/batch",
                  "drizzle-orm/neon-http",
                  "hono/http-exception",
                  "hono/utils/http-status",
                  "hono/router/trie-router",
                  "@neondatabase/serverless",
                  "openapi-sampler",
                  "lru-cache",
                ],
              },
            },
          },
          globalSetup: ["./test/support/global-setup.ts"],
          testTimeout: 30_000,
          hookTimeout: 60_000,
        },
      },
    ],
  },
});
