import { buildApp } from "../src/app";
import type { Env } from "../src/env";
import { anchorPendingLedgers } from "../src/ledger/sweep";

export { OrgLedger } from "../src/ledger/org-ledger";

const app = buildApp();

export default {
  fetch: app.fetch,
  async scheduled(_controller, env, ctx) {
    ctx.waitUntil(anchorPendingLedgers(env));
  },
} satisfies ExportedHandler<Env>;
