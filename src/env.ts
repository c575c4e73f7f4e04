import { ApiError } from "./errors";
import { logError } from "./lib/log";
import type { NetworkMessage } from "./network/queue";
import type { OrgLedger } from "./org-ledger/org-ledger";
import type { DeliveryMessage } from "./outbox/enqueue";
import type { TrainingMessage } from "./risk-models/training-queue";

/**
 * The Worker's bindings. Every value is optional at the type level because a deployment can
 * be misconfigured: each consumer validates what it needs and fails closed (503), so a missing
 * signing key or database URL can never turn into an unsigned or unscoped answer.
 */
export interface Env {
  /** Postgres connection string of the application role (a secret in production). */
  DATABASE_URL?: string;
  /**
   * Local development and tests only (`"true"`): reach the database through the local
   * Neon-compatible SQL-over-HTTP endpoint at the host and port of DATABASE_URL.
   */
  LOCAL_SQL_ENDPOINT?: string;
  /** The current Ed25519 private key as a JWK (a secret). */
  SIGNING_KEY?: string;
  /**
   * The current P-256 private key as a JWK (a secret): signs ES256 what a verifier without
   * EdDSA must check (AP2 Mandate Receipts; docs/architecture.md, issue 42's ADR).
   */
  SIGNING_KEY_ES256?: string;
  /**
   * JSON array of retired public JWKs (Ed25519 or P-256), still published to verify old
   * payloads.
   */
  SIGNING_KEYS_RETIRED?: string;
  /**
   * The network keys (a secret): a JSON array of 256-bit `oct` JWKs with a `kid`, the key read
   * with first; every one is written with (src/network/keys.ts). Unset: no network signals.
   */
  NETWORK_KEYS?: string;
  /** The network's k-anonymity floor (default and minimum 3; docs/network.md). */
  NETWORK_K?: string;
  /**
   * The master key that wraps each principal's data key, as a JSON JWK
   * (`{"kty":"oct","k":<32 bytes base64url>,"kid":...}`; a secret). Never stored in the database.
   */
  PRINCIPAL_MASTER_KEY?: string;
  /**
   * Session tokens: expected `iss` and `aud`. IDP_ISSUER is also where the console's sign-in
   * finds the provider (`/.well-known/openid-configuration`; https in production).
   */
  IDP_ISSUER?: string;
  IDP_AUDIENCE?: string;
  /**
   * The console's OIDC client id at the identity provider (default IDP_AUDIENCE): the `aud` of
   * the ID token that becomes the session cookie, accepted as a session audience too.
   */
  IDP_CLIENT_ID?: string;
  /** Production: the identity provider's key set URL. */
  IDP_JWKS_URL?: string;
  /** Local development: the key set inline, as JSON. */
  IDP_JWKS?: string;
  /**
   * The static pages (`[assets]` in wrangler.toml: the API reference at /docs). The asset layer
   * answers their paths before the Worker runs; the binding lets code (and the Worker tests,
   * whose `SELF` bypasses the asset layer) read them with their `_headers` applied.
   */
  ASSETS?: Fetcher;
  /** One OrgLedger Durable Object per organization: the audit chain's sequencer. */
  ORG_LEDGER?: DurableObjectNamespace<OrgLedger>;
  /**
   * Where new org ledger objects are created: one of Cloudflare's location hints (`enam`,
   * `weur`, …; src/ledger/location-hint.ts), matching the database's region. Unset: Cloudflare
   * places each object near the Worker that first asks for it. Applies only at an object's
   * creation (docs/latency.md).
   */
  LEDGER_LOCATION_HINT?: string;
  /** Milliseconds from an append to the checkpoint that anchors it (default 10 000). */
  LEDGER_ANCHOR_DELAY_MS?: string;
  /** Webhook deliveries waiting to be attempted (one message per delivery attempt chain). */
  WEBHOOK_QUEUE?: Queue<DeliveryMessage>;
  /**
   * Risk models waiting to be trained (one message per model; src/risk-models/training-job.ts):
   * training never runs on a request's path.
   */
  TRAINING_QUEUE?: Queue<TrainingMessage>;
  /**
   * Orgs' modes whose payments and labels are due to be contributed to the network (one message
   * per org and mode; src/network/contributions.ts): never on a request's path.
   */
  NETWORK_QUEUE?: Queue<NetworkMessage>;
  /** Comma-separated retry delays in seconds, overriding the default schedule (tests, ops). */
  WEBHOOK_RETRY_SCHEDULE?: string;
  /** Tests only (honoured when ENVIRONMENT is `test`): the backtest's page size. */
  TEST_BACKTEST_PAGE_SIZE?: string;
  /**
   * Tests only (honoured when ENVIRONMENT is `test`): how old a payment or label must be before
   * it is contributed to the network (default 10 s; src/network/queue.ts).
   */
  TEST_NETWORK_SETTLE_SECONDS?: string;
  /** Tests only (honoured when ENVIRONMENT is `test`): assess components to fail on purpose. */
  TEST_FAULTS?: string;
  /** Stripe's secret API key (a secret; never logged). Without it checkout answers 503. */
  STRIPE_SECRET_KEY?: string;
  /** The signing secret of the Stripe webhook endpoint (`whsec_…`; a secret; never logged). */
  STRIPE_WEBHOOK_SECRET?: string;
  /**
   * Where the Stripe API is reached: `https://api.stripe.com` unless set. Outside production
   * (tests, development) any http(s) URL, such as the local fake; in production https only.
   */
  STRIPE_API_BASE?: string;
  /**
   * The service's public origin (`https://risk.example.com`): the `iss` of Risk Payloads, the
   * trust list's `issuer`, and the base of every absolute URL the service publishes. Required;
   * read it through `publicBaseUrl`. `npm run dev` sets it to its own address.
   */
  PUBLIC_BASE_URL?: string;
  /** How long a Risk Payload is valid, in seconds (default 300, at most 3600). */
  RISK_PAYLOAD_TTL_SECONDS?: string;
  /** `production`, `development` or `test`; read it through `modeOf`. */
  ENVIRONMENT?: string;
  /** Workers Rate Limiting bindings, one per limited door (src/http/rate-limit.ts). */
  RATE_LIMIT_ASSESS?: RateLimit;
  RATE_LIMIT_WRITE?: RateLimit;
  RATE_LIMIT_EXPENSIVE?: RateLimit;
  RATE_LIMIT_PUBLIC?: RateLimit;
  RATE_LIMIT_FAILED_AUTH?: RateLimit;
}

export type EnvironmentMode = "production" | "development" | "test";

/**
 * The environment's mode, the one reading of ENVIRONMENT. Anything but exactly `development` or
 * `test` (unset, misspelled, `staging`) is production: a misconfigured deployment gets the
 * strict behaviour, never a development shortcut.
 */
export function modeOf(env: { ENVIRONMENT?: string }): EnvironmentMode {
  return env.ENVIRONMENT === "development" || env.ENVIRONMENT === "test"
    ? env.ENVIRONMENT
    : "production";
}

/**
 * The service's public origin, from PUBLIC_BASE_URL: never from the request, whose `Host` (and
 * any `X-Forwarded-Host`) the caller chooses, so a signed `iss` or a published URL can only
 * name the service as its operator configured it. An origin only (scheme, host, optional port;
 * one trailing `/` is accepted), https in production, http also in development and tests.
 * Missing or invalid: 503 `service_misconfigured`, never a URL guessed from the request.
 */
export function publicBaseUrl(env: Env): string {
  const origin = configuredOrigin(env);
  if (origin === null) throw misconfigured("PUBLIC_BASE_URL");
  return origin;
}

/**
 * PUBLIC_BASE_URL's origin as `publicBaseUrl` reads it, or null when it is missing or invalid:
 * for what an answer can go without (an error body's `doc_url`), so that a misconfigured
 * setting never turns one error into another.
 */
export function configuredOrigin(env: Env): string | null {
  const allowHttp = modeOf(env) !== "production";
  const raw = env.PUBLIC_BASE_URL;
  // Every fresh assessment signs with it: the URL is parsed once per setting per isolate.
  const cacheKey = `${allowHttp}:${raw}`;
  let origin = origins.get(cacheKey);
  if (origin === undefined) {
    origin = originOf(raw, allowHttp);
    origins.set(cacheKey, origin);
  }
  return origin;
}

const origins = new Map<string, string | null>();

function originOf(raw: string | undefined, allowHttp: boolean): string | null {
  let url: URL;
  try {
    if (raw === undefined) return null;
    url = new URL(raw);
  } catch {
    return null;
  }
  const schemeAllowed = url.protocol === "https:" || (allowHttp && url.protocol === "http:");
  const originOnly =
    url.username === "" &&
    url.password === "" &&
    url.pathname === "/" &&
    !raw.includes("?") &&
    !raw.includes("#");
  return schemeAllowed && originOnly && url.host !== "" ? url.origin : null;
}

/**
 * A setting the request needs is missing or invalid: the operator's to fix, so it is logged by
 * name, and the answer names it too (a setting's name is no secret; its value is never shown).
 */
export function misconfigured(setting: string): ApiError {
  logError("service misconfigured", { setting });
  return new ApiError("service_misconfigured", { setting });
}

export const SERVICE_NAME = "agent-risk";
export const AP2_VERSION = "0.2.0";
export const API_VERSION = "1.0.0";
