/**
 * Network signals on the assess path (issue 41; docs/architecture.md, "ADR: the learned model
 * and network signals on the assess path", point 7 as built). The Worker digests the request's
 * identifiers under the read key before the context read; one more statement of that read's
 * batch (`network_context`, drizzle/0022) answers the network's counts for them, and for the
 * keys of the org's active issuers that the credential's root could name (their digests are
 * kept with the issuers: src/ap2-credentials/issuer-digests.ts). Once the chain is verified, the
 * verified issuer key's count is kept and the rest dropped. No round trip of its own.
 */
import { sql } from "drizzle-orm";
import type { RootHeader } from "../ap2-credentials/issuers";
import { type Placeholders, preparedOnce } from "../db/prepared";
import type { NetworkOutcome } from "../schemas/assessments";
import type { NetworkCount } from "./counts";
import {
  NETWORK_KINDS,
  type NetworkKey,
  type NetworkKind,
  networkDigest,
  networkK,
  networkKeys,
} from "./keys";

/** The days `network_signals` counts, up to the assessment's time. */
export const NETWORK_WINDOW_DAYS = 30;

/** The raw identifiers of an assessment the network knows by (`assessments.network_ids`). */
export interface NetworkIds {
  /** RFC 7638 thumbprint of the key the mandate or credential names as the agent's. */
  agent_key: string | null;
  /** RFC 7638 thumbprint of the issuer key that verified the credential's root. */
  issuer_key: string | null;
  /** The payment mandate's `payment_instrument.fingerprint`. */
  instrument: string | null;
}

/** What the context read asks the network, decided before it. */
export interface NetworkQuery {
  key: NetworkKey;
  k: number;
  /** The request's own identifiers' digests under the read key, by kind. */
  digests: Partial<Record<NetworkKind, string>>;
  /** Whether the org's issuer keys are asked too: only for a request with a credential. */
  issuers: boolean;
  /** The root's `kid`: only the issuer keys it names are asked (all when it names none). */
  issuerKid: string | null;
}

/**
 * The question for the context read; null when NETWORK_KEYS is unset or unusable (the read
 * then has no network statement at all). `payee` is the counterparty as history stores it,
 * given for payment kinds only: a message's recipient is a person, never a network identifier.
 */
export function networkQuery(
  env: { NETWORK_KEYS?: string; NETWORK_K?: string },
  ids: { payee: string | null; agentKey: string | null; instrument: string | null },
  credentialRoot: RootHeader | null | undefined,
): NetworkQuery | null {
  const key = networkKeys(env)?.[0];
  if (!key) return null;
  const digests: Partial<Record<NetworkKind, string>> = {};
  if (ids.payee !== null) digests.payee = networkDigest(key, "payee", ids.payee);
  if (ids.agentKey !== null) digests.agent_key = networkDigest(key, "agent_key", ids.agentKey);
  if (ids.instrument !== null) {
    digests.instrument = networkDigest(key, "instrument", ids.instrument);
  }
  return {
    key,
    k: networkK(env),
    digests,
    issuers: credentialRoot !== null && credentialRoot !== undefined,
    issuerKid: typeof credentialRoot?.kid === "string" ? credentialRoot.kid : null,
  };
}

type NetworkValues = {
  livemode: boolean;
  testClock: string | null;
  k: number;
  keyId: string;
  digests: string;
  issuers: boolean;
  issuerKid: string | null;
};

const networkStatement = preparedOnce((db, q: Placeholders<NetworkValues>) =>
  db.execute(sql`select network_context(${q.livemode}, ${q.testClock}::uuid, ${q.k}::int,
    ${q.keyId}, ${q.digests}::json, ${q.issuers}::boolean, ${q.issuerKid}) as network`),
);

/** The batch item of the context read that asks the network (`network_context`, drizzle/0022). */
export function networkRead(
  db: Parameters<typeof networkStatement>[0],
  query: NetworkQuery,
  livemode: boolean,
  testClock: string | null,
) {
  return networkStatement(db, {
    livemode,
    testClock,
    k: query.k,
    keyId: query.key.kid,
    digests: JSON.stringify(Object.entries(query.digests)),
    issuers: query.issuers,
    issuerKid: query.issuerKid,
  });
}

/** The counts of the network statement's result: null when the org's mode does not consume. */
export function networkCountsOf(result: unknown): NetworkCount[] | null {
  const rows = (result as { rows?: { network?: unknown }[] } | undefined)?.rows;
  const value = rows?.[0]?.network;
  return Array.isArray(value) ? (value as NetworkCount[]) : null;
}

/**
 * `outcome.network`: each kind's counts for the request's digest, the issuer's for the key that
 * verified the root (`issuerKeyThumbprint`; none without one); an identifier the request does
 * not carry reads 0. Null when the org's mode does not consume.
 */
export function networkOutcome(
  query: NetworkQuery,
  counts: NetworkCount[] | null,
  issuerKeyThumbprint: string | null,
): NetworkOutcome | null {
  if (counts === null) return null;
  const digests: Partial<Record<NetworkKind, string>> = { ...query.digests };
  if (query.issuers && issuerKeyThumbprint !== null) {
    digests.issuer = networkDigest(query.key, "issuer", issuerKeyThumbprint);
  }
  const outcome: Record<string, number> = {};
  for (const kind of NETWORK_KINDS) {
    const digest = digests[kind];
    const found =
      digest === undefined ? undefined : counts.find((c) => c.kind === kind && c.digest === digest);
    outcome[`${kind}_fraud_orgs`] = found?.fraud_orgs ?? 0;
    outcome[`${kind}_legitimate_orgs`] = found?.legitimate_orgs ?? 0;
  }
  return { ...outcome, window_days: NETWORK_WINDOW_DAYS, k: query.k } as NetworkOutcome;
}

/** The payment mandate's instrument fingerprint, when it carries one as a string. */
export function instrumentFingerprint(mandate: Record<string, unknown>): string | null {
  const instrument = mandate.payment_instrument;
  if (typeof instrument !== "object" || instrument === null) return null;
  const fingerprint = (instrument as Record<string, unknown>).fingerprint;
  return typeof fingerprint === "string" && fingerprint !== "" ? fingerprint : null;
}
