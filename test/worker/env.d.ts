import type { Env as WorkerEnv } from "../../src/env";

declare global {
  namespace Cloudflare {
    interface Env extends WorkerEnv {
      TEST_IDP_PRIVATE_JWK: string;
      TEST_OWNER_DATABASE_URL: string;
      TEST_SCALE: string;
      TEST_FIXTURE_URL: string;
      TEST_RATE_LIMIT: RateLimit;
      TEST_RATE_LIMIT_PUBLIC: RateLimit;
    }
  }
}
