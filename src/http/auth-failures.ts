import { LRUCache } from "lru-cache";
import type { Credential } from "../auth/credential";
import type { Env } from "../env";
import { ApiError } from "../errors";
import { RATE_LIMITS } from "./rate-limit";

/**
 * Failed authentications, limited before the credential is looked up (docs/api.md, Rate
 * limits). A client that rotates random well-formed keys would otherwise never be limited (each
 * key is a new per-key bucket) and cost a database round trip each.
 *
 * The binding can only count (`limit()` counts the call it answers), so a failure is counted
 * once it has happened, in each of its buckets: the client's IP and, for an API key, the key's
 * hash. The failure whose count the binding refuses is still answered as what it is (401), and
 * its buckets are remembered here, in the isolate, until the binding's window ends: every later
 * request of a remembered bucket is answered 429 before its credential is read or looked up,
 * without a database round trip.
 */

const { binding, period } = RATE_LIMITS.failed_auth;

/** Buckets past the limit, with when their window ends (ms); bounded, like any isolate cache. */
const blocked = new LRUCache<string, number>({ max: 10_000 });

function buckets(ip: string, credential: Credential | undefined): string[] {
  const own = [`ip:${ip}`];
  return credential?.kind === "api_key" ? [...own, `key:${credential.hash}`] : own;
}

function limited(retryAfter: number): ApiError {
  return new ApiError(
    "rate_limited",
    { limit: "failed_auth", period_seconds: period, retry_after_seconds: retryAfter },
    {
      retryAfter,
      message:
        "Too many failed authentications from this client or with this key: wait the Retry-After seconds, then try again with a valid credential.",
    },
  );
}

/**
 * 429 if the client, or the key it presents, failed too often in the current window (as this
 * isolate knows it). Called before the credential is read, and again with it, before any
 * lookup.
 */
export function refuseBlocked(ip: string, credential?: Credential): void {
  const now = Date.now();
  for (const bucket of buckets(ip, credential)) {
    const until = blocked.get(bucket);
    if (until !== undefined && until > now) throw limited(Math.ceil((until - now) / 1000));
  }
}

/** Counts a refused credential against its buckets; a deployment without the binding counts nothing. */
export async function countFailure(
  env: Env,
  ip: string,
  credential: Credential | undefined,
): Promise<void> {
  const limiter = env[binding] as RateLimit | undefined;
  if (!limiter) return;
  const windowEnds = (Math.floor(Date.now() / 1000 / period) + 1) * period * 1000;
  await Promise.all(
    buckets(ip, credential).map(async (bucket) => {
      const { success } = await limiter.limit({ key: `failed_auth:${bucket}` });
      if (!success) blocked.set(bucket, windowEnds);
    }),
  );
}
