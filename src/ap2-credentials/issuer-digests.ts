/**
 * The network digests an issuer keeps of its keys (`credential_issuers.network_digests`): the
 * issuer kind's digest is of the key that verified a credential's root, known only once the
 * chain is verified, after the context read; keeping every trusted key's digest with its issuer
 * lets that read ask the network about the keys the root's `kid` could name, in the same round
 * trip (src/network/assess.ts). Written with the keys (an issuer created, a JWKS fetched) and,
 * when the keys or the network keys changed since (a rotation, a key set unset before), after
 * the response of the next request with a credential: each such request compares them.
 */
import { and, eq, type SQL, sql } from "drizzle-orm";
import type { Tenant } from "../auth/tenant";
import { credentialIssuers, type IssuerJwk, type IssuerNetworkDigest } from "../db/schema";
import type { Env } from "../env";
import { logError } from "../lib/log";
import { networkDigest, networkKeys } from "../network/keys";
import { isPinned, pinKey, thumbprint } from "./keys";

/**
 * The digests of `keys` (the RFC 7638 thumbprint of each) under every network key, each named
 * as a root header would name its key (`kid`, else the thumbprint); null without network keys.
 */
export function issuerNetworkDigests(
  env: Pick<Env, "NETWORK_KEYS">,
  keys: readonly IssuerJwk[],
): IssuerNetworkDigest[] | null {
  const network = networkKeys(env);
  if (!network) return null;
  const digests: IssuerNetworkDigest[] = [];
  for (const jwk of keys) {
    const pinned = pinKey(jwk);
    if (!isPinned(pinned)) continue;
    const print = thumbprint(pinned);
    for (const key of network) {
      digests.push({
        key_id: key.kid,
        kid: jwk.kid ?? print,
        digest: networkDigest(key, "issuer", print),
      });
    }
  }
  return digests;
}

/** Whether the stored digests are the ones the keys make now (same items, same order). */
export function sameDigests(
  stored: readonly IssuerNetworkDigest[] | null,
  wanted: readonly IssuerNetworkDigest[],
): boolean {
  if (stored === null || stored.length !== wanted.length) return false;
  return stored.every((d, i) => {
    const w = wanted[i] as IssuerNetworkDigest;
    return d.key_id === w.key_id && d.kid === w.kid && d.digest === w.digest;
  });
}

/**
 * Writes an issuer's digests, made from `keys`, unless its keys changed meanwhile (another
 * request's fetch wrote newer ones, and their digests with them). After the response: a
 * failure is logged, and the next request with a credential tries again.
 */
export async function storeIssuerDigests(
  tenant: Tenant,
  issuerId: string,
  keys: readonly IssuerJwk[],
  digests: readonly IssuerNetworkDigest[],
): Promise<void> {
  const keysNow: SQL = sql`coalesce(${credentialIssuers.jwks}, ${credentialIssuers.fetchedJwks}, '[]'::jsonb)`;
  try {
    await tenant.batch((db) => [
      db
        .update(credentialIssuers)
        .set({ networkDigests: [...digests] })
        .where(
          and(eq(credentialIssuers.id, issuerId), sql`${keysNow} = ${JSON.stringify(keys)}::jsonb`),
        ),
    ]);
  } catch (error) {
    logError("issuer network digests not written", { issuer: issuerId, error: String(error) });
  }
}
