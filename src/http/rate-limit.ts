import type { MiddlewareHandler } from "hono";
import type { Credential } from "../auth/credential";
import type { Env } from "../env";
import { ApiError } from "../errors";
import type { AppEnv } from "./context";

/**
 * The doors that are limited, each a Workers Rate Limiting binding (its limit and period are
 * configuration, per environment: wrangler.toml, and vitest.config.ts for the tests). See
 * docs/api.md (Rate limits).
 */
export const RATE_LIMITS = {
  /** `POST /v1/assess`, per API key (or per signed-in person). */
  assess: { binding: "RATE_LIMIT_ASSESS", period: 10 },
  /** Every other write (`POST`, `PATCH`, `DELETE`), per API key (or per signed-in person). */
  write: { binding: "RATE_LIMIT_WRITE", period: 10 },
  /** Reads and runs that scan an org's history (audit verify and export, backtests, evals), per org. */
  expensive: { binding: "RATE_LIMIT_EXPENSIVE", period: 60 },
  /** The public routes (transparency, artifact verification, trust list, key-set misses), per client IP. */
  public: { binding: "RATE_LIMIT_PUBLIC", period: 60 },
  /**
   * Refused credentials, per client IP and per API key: counted after the refusal, enforced
   * before the next lookup (src/http/auth-failures.ts).
   */
  failed_auth: { binding: "RATE_LIMIT_FAILED_AUTH", period: 60 },
} as const satisfies Record<string, { binding: keyof Env; period: 10 | 60 }>;

export type RateLimitDoor = keyof typeof RATE_LIMITS;

/**
 * Counts one request through `door` for `key`; over the limit, 429 `rate_limited` with
 * `Retry-After` (the seconds left in the binding's window). A deployment without the binding
 * is not limited (every environment this project defines binds all four).
 */
export async function enforceRateLimit(env: Env, door: RateLimitDoor, key: string): Promise<void> {
  const { binding, period } = RATE_LIMITS[door];
  const limiter = env[binding] as RateLimit | undefined;
  if (!limiter) return;
  const { success } = await limiter.limit({ key: `${door}:${key}` });
  if (success) return;
  const retryAfter = period - (Math.floor(Date.now() / 1000) % period);
  throw new ApiError(
    "rate_limited",
    { limit: door, period_seconds: period, retry_after_seconds: retryAfter },
    { retryAfter },
  );
}

/**
 * Who a per-key limit counts: the API key (by its hash, never the key itself) or the signed-in
 * person (a console session acts for its person, whichever org it names).
 */
export function credentialKey(credential: Credential): string {
  return credential.kind === "api_key" ? `key:${credential.hash}` : `user:${credential.subject}`;
}

/**
 * The client's address as Cloudflare's edge reports it (`CF-Connecting-IP`, which a client
 * cannot set through Cloudflare). Without it (local runs) every client is one: `unknown`.
 */
export function clientIp(header: (name: string) => string | undefined): string {
  return header("cf-connecting-ip")?.trim() || "unknown";
}

/** The per-client-IP limit of a public route. */
export const publicRateLimit: MiddlewareHandler<AppEnv> = async (c, next) => {
  await enforceRateLimit(
    c.env,
    "public",
    clientIp((name) => c.req.header(name)),
  );
  await next();
};
