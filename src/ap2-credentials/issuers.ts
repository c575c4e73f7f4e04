/**
 * The org's credential issuers: the trust anchors an AP2 chain's root is verified with.
 *
 * Exported API (docs/credentials.md, "Trust anchors"):
 *
 * - `trustAnchorsFor(tenant, env, root?)`: the active issuers' keys as verifyChain's
 *   `TrustAnchors` (`{ keys: [{ issuerId, jwk }] }`), one round trip of its own. verifyRoot
 *   (hops.ts) matches a root whose header has a `kid` to the keys whose JWK `kid` equals it (or,
 *   for a key without `kid`, whose RFC 7638 thumbprint equals it), and tries every key for a
 *   root without `kid`; the verdict's `issuerId` is the id of the issuer whose key verified.
 *   Pass the root's header as `root` so an unknown `kid` can refresh a JWKS URL issuer.
 * - `activeIssuers(db)` + `anchorsOf(tenant, env, rows, root?)`: the same in two halves, for a
 *   caller that folds the read into a round trip it makes anyway (the assess context read).
 * - `createIssuer(tenant, body)`, `toIssuer(row)`: what `POST /v1/credential-issuers` does (the
 *   issuer and its `credential_issuer.created` entry, in one transaction) and the record the
 *   API shows.
 */
import { and, eq, isNull, lt, or, sql } from "drizzle-orm";
import type { JWK } from "jose";
import type { Tenant } from "../auth/tenant";
import type { Database } from "../db/client";
import { credentialIssuers, type IssuerJwk, principals } from "../db/schema";
import type { Env } from "../env";
import { ApiError } from "../errors";
import { commit } from "../ledger/commit";
import { newId } from "../lib/ids";
import { logError } from "../lib/log";
import { checkOutboundUrl, outboundPolicy } from "../net/outbound";
import { isoOrNull } from "../schemas/common";
import type { TrustAnchors } from "./hops";
import { issuerNetworkDigests, sameDigests, storeIssuerDigests } from "./issuer-digests";
import {
  fetchIssuerJwks,
  isIssuerKey,
  issuerKey,
  JWKS_TTL_MS,
  MAX_STALE_MS,
  REFETCH_INTERVAL_MS,
} from "./issuer-jwks";
import type { CreateCredentialIssuer, CredentialIssuer } from "./issuer-schemas";
import { isPinned, pinKey, thumbprint } from "./keys";

export type IssuerRow = typeof credentialIssuers.$inferSelect;

/** The columns anchors are built from. */
const ANCHOR_COLUMNS = {
  id: credentialIssuers.id,
  jwks: credentialIssuers.jwks,
  jwksUrl: credentialIssuers.jwksUrl,
  fetchedJwks: credentialIssuers.fetchedJwks,
  fetchedAt: credentialIssuers.fetchedAt,
  etag: credentialIssuers.etag,
  fetchAttemptedAt: credentialIssuers.fetchAttemptedAt,
  networkDigests: credentialIssuers.networkDigests,
  requiredConstraints: credentialIssuers.requiredConstraints,
  statusRequired: credentialIssuers.statusRequired,
};

export type AnchorRow = Pick<IssuerRow, keyof typeof ANCHOR_COLUMNS>;

/** The statement that reads the org's active issuers (RLS: the caller's org only). */
export function activeIssuers(db: Database) {
  return db
    .select(ANCHOR_COLUMNS)
    .from(credentialIssuers)
    .where(eq(credentialIssuers.status, "active"))
    .orderBy(credentialIssuers.id);
}

/** What a root header says about its key: only `kid` is read. */
export interface RootHeader {
  kid?: unknown;
}

/** The keys an issuer is trusted with: inline, or the last JWKS fetched from its URL. */
function keysOf(row: AnchorRow): IssuerJwk[] {
  return row.jwks ?? row.fetchedJwks ?? [];
}

/** Whether a root naming `kid` would try this key (verifyRoot's rule, hops.ts). */
function names(key: IssuerJwk, kid: string): boolean {
  if (key.kid !== undefined) return key.kid === kid;
  const pinned = pinKey(key);
  return isPinned(pinned) && thumbprint(pinned) === kid;
}

// Fetches of JWKS URLs in this isolate: the last attempt per issuer (the database's
// `fetch_attempted_at` reaches the other isolates, once written) and the one in flight.
const MAX_REMEMBERED = 1000;
const attempted = new Map<string, number>();
const inFlight = new Map<string, Promise<AnchorRow>>();

function lastAttempt(row: AnchorRow): number {
  return Math.max(row.fetchAttemptedAt?.getTime() ?? 0, attempted.get(row.id) ?? 0);
}

/**
 * Fetches the issuer's JWKS (revalidating the cached copy), and writes the outcome to the
 * database after the response. Answers the row as it is now: new keys, or the cached ones.
 */
function refresh(tenant: Tenant, row: AnchorRow, now: number): Promise<AnchorRow> {
  const running = inFlight.get(row.id);
  if (running) return running;
  attempted.delete(row.id);
  attempted.set(row.id, now);
  const oldest = attempted.keys().next().value;
  if (attempted.size > MAX_REMEMBERED && oldest !== undefined) attempted.delete(oldest);
  const url = row.jwksUrl as string;
  const pending = fetchIssuerJwks(tenant.env, url, row.fetchedJwks ? row.etag : null).then(
    (fetched) => {
      const at = new Date(now);
      const next: AnchorRow =
        fetched.outcome === "fetched"
          ? {
              ...row,
              fetchedJwks: fetched.keys,
              etag: fetched.etag,
              fetchedAt: at,
              networkDigests: issuerNetworkDigests(tenant.env, fetched.keys) ?? row.networkDigests,
            }
          : fetched.outcome === "not_modified"
            ? { ...row, fetchedAt: at }
            : row;
      if (fetched.outcome === "failed") {
        logError("issuer JWKS fetch failed", { issuer: row.id, problem: fetched.problem });
      }
      tenant.later(storeFetch(tenant, { ...next, fetchAttemptedAt: at }));
      return next;
    },
  );
  inFlight.set(row.id, pending);
  return pending.finally(() => inFlight.delete(row.id));
}

/** Writes a fetch's outcome unless a later attempt already wrote its own. */
async function storeFetch(tenant: Tenant, row: AnchorRow): Promise<void> {
  const at = row.fetchAttemptedAt as Date;
  try {
    await tenant.batch((db) => [
      db
        .update(credentialIssuers)
        .set({
          fetchedJwks: row.fetchedJwks,
          fetchedAt: row.fetchedAt,
          etag: row.etag,
          fetchAttemptedAt: at,
          networkDigests: row.networkDigests,
        })
        .where(
          and(
            eq(credentialIssuers.id, row.id),
            eq(credentialIssuers.jwksUrl, row.jwksUrl as string),
            or(
              isNull(credentialIssuers.fetchAttemptedAt),
              lt(credentialIssuers.fetchAttemptedAt, at),
            ),
          ),
        ),
    ]);
  } catch (error) {
    logError("issuer JWKS cache write failed", { issuer: row.id, error: String(error) });
  }
}

/**
 * A JWKS URL issuer's row with the keys to trust now (docs/credentials.md, "Trust anchors"):
 * - cached keys younger than the TTL are used as they are;
 * - older ones (up to MAX_STALE) are used while a refresh runs after the response;
 * - no usable cache, or a root `kid` that no anchor key names: fetched now, at most once per
 *   REFETCH_INTERVAL per issuer; when that fetch fails, the cached keys still apply.
 */
async function current(
  tenant: Tenant,
  row: AnchorRow,
  now: number,
  kidKnown: boolean,
): Promise<AnchorRow> {
  const age = row.fetchedJwks && row.fetchedAt ? now - row.fetchedAt.getTime() : Infinity;
  const cached = age <= MAX_STALE_MS ? row : { ...row, fetchedJwks: null };
  if (now - lastAttempt(row) < REFETCH_INTERVAL_MS) return cached;
  if (cached.fetchedJwks === null || !kidKnown) {
    const fetched = await refresh(tenant, cached, now);
    return fetched.fetchedJwks === null ? cached : fetched;
  }
  if (age > JWKS_TTL_MS) tenant.later(refresh(tenant, cached, now));
  return cached;
}

/**
 * An issuer whose network digests are not the ones its keys make now (keys stored before the
 * network keys were set, or before a network key was added): written after the response, so
 * the next request's context read asks the network about its keys.
 */
function refreshDigests(tenant: Tenant, env: Env, row: AnchorRow): void {
  const keys = keysOf(row);
  const digests = issuerNetworkDigests(env, keys);
  if (digests === null || sameDigests(row.networkDigests, digests)) return;
  tenant.later(storeIssuerDigests(tenant, row.id, keys, digests));
}

/** The anchors the rows of `activeIssuers` make, oldest issuer first. */
export async function anchorsOf(
  tenant: Tenant,
  env: Env,
  rows: AnchorRow[],
  root?: RootHeader,
): Promise<TrustAnchors> {
  const now = Date.now();
  const kid = typeof root?.kid === "string" ? root.kid : undefined;
  const kidKnown = kid === undefined || rows.some((row) => keysOf(row).some((k) => names(k, kid)));
  const trusted = await Promise.all(
    rows.map((row) => (row.jwksUrl === null ? row : current(tenant, row, now, kidKnown))),
  );
  // A row fetched anew just now writes its digests with its keys (storeFetch).
  trusted.forEach((row, i) => {
    if (row === rows[i]) refreshDigests(tenant, env, row);
  });
  return {
    keys: trusted.flatMap((row) =>
      keysOf(row).map((jwk) => ({
        issuerId: row.id,
        jwk: jwk as JWK,
        requiredConstraints: row.requiredConstraints,
      })),
    ),
    statusRequired: trusted.filter((row) => row.statusRequired).map((row) => row.id),
  };
}

/**
 * The active issuers' keys as verifyChain's trust anchors: one round trip, plus a JWKS fetch
 * when the cache policy needs one now.
 */
export async function trustAnchorsFor(
  tenant: Tenant,
  env: Env,
  root?: RootHeader,
): Promise<TrustAnchors> {
  const [rows] = await tenant.batch((db) => [activeIssuers(db)]);
  return anchorsOf(tenant, env, rows, root);
}

/** A key as stored, or 400 with the key's path. */
async function storedKey(jwk: Record<string, unknown>, path: string): Promise<IssuerJwk> {
  const key = await issuerKey(jwk);
  if (!isIssuerKey(key)) {
    throw new ApiError("invalid_request", [
      { path, message: `the key ${key.problem}`, code: "custom" },
    ]);
  }
  return key;
}

/** The JWKS URL as fetched, or 400 `url_not_allowed` for one the outbound guard refuses. */
export function allowedJwksUrl(env: Env, raw: string): string {
  const checked = checkOutboundUrl(raw, outboundPolicy(env));
  if (!checked.ok) {
    throw new ApiError("url_not_allowed", [
      { path: "jwks_url", message: `refused: ${checked.reason}` },
    ]);
  }
  return checked.url.href;
}

/** A JWKS URL's keys at registration: an issuer nobody could verify with is refused (400). */
async function firstFetch(env: Env, url: string) {
  const fetched = await fetchIssuerJwks(env, url, null);
  if (fetched.outcome !== "fetched") {
    const message = fetched.outcome === "failed" ? fetched.problem : "no JWK Set";
    throw new ApiError("jwks_unreachable", [{ path: "jwks_url", message }]);
  }
  return fetched;
}

/**
 * Registers an issuer (a JWKS URL is fetched first) and commits `credential_issuer.created`,
 * the issuer as the API shows it, in the transaction that inserts it. A `principal_id` must name
 * an active principal of the org: it is read first (nothing is recorded for a missing or erased
 * one), and the insert selects it `for share` again, so a concurrent erasure cannot slip between
 * check and insert (that lost race leaves its entry as the trace of an attempt).
 */
export async function createIssuer(
  tenant: Tenant,
  body: CreateCredentialIssuer,
): Promise<IssuerRow> {
  const jwks = body.jwks
    ? await Promise.all(body.jwks.keys.map((jwk, i) => storedKey(jwk, `jwks.keys.${i}`)))
    : null;
  const jwksUrl = body.jwks_url === undefined ? null : allowedJwksUrl(tenant.env, body.jwks_url);
  // Nobody makes the service fetch a URL before it knows who is asking (401/403 first).
  if (jwksUrl !== null) await tenant.caller();
  const fetched = jwksUrl === null ? null : await firstFetch(tenant.env, jwksUrl);
  const principalId = body.principal_id ?? null;
  if (principalId !== null) await assertPrincipalActive(tenant, principalId);
  const now = new Date();
  const at = fetched ? now : null;
  const atText = at?.toISOString() ?? null;
  const row: IssuerRow = {
    id: newId(now.getTime()),
    orgId: (await tenant.caller()).orgId,
    name: body.name,
    jwks,
    jwksUrl,
    principalId,
    status: "active",
    fetchedJwks: fetched?.keys ?? null,
    fetchedAt: at,
    etag: fetched?.etag ?? null,
    fetchAttemptedAt: at,
    networkDigests: issuerNetworkDigests(tenant.env, jwks ?? fetched?.keys ?? []),
    requiredConstraints: [...new Set(body.required_constraints ?? [])],
    statusRequired: body.status_required ?? false,
    createdAt: now,
    revokedAt: null,
  };
  const json = (keys: IssuerJwk[] | null | undefined) => (keys ? JSON.stringify(keys) : null);
  const columns = sql`(id, name, jwks, jwks_url, principal_id, fetched_jwks, etag, fetched_at,
    fetch_attempted_at, network_digests, required_constraints, status_required, created_at)`;
  const values = sql`${row.id}, ${row.name}, ${json(jwks)}::jsonb, ${jwksUrl}, ${principalId}::uuid,
    ${json(row.fetchedJwks)}::jsonb, ${row.etag}, ${atText}::timestamptz, ${atText}::timestamptz,
    ${row.networkDigests ? JSON.stringify(row.networkDigests) : null}::jsonb,
    ${textArray(row.requiredConstraints)}::text[], ${row.statusRequired},
    ${now.toISOString()}::timestamptz`;
  const issuer = toIssuer(row);
  const { results } = await commit(
    tenant,
    {
      type: "credential_issuer.created",
      subject: { type: "credential_issuer", id: issuer.id },
      payload: issuer,
    },
    (db) => [
      principalId === null
        ? db.execute(sql`insert into credential_issuers ${columns} values (${values})`)
        : db.execute(sql`insert into credential_issuers ${columns}
          select ${values} from principals p
          where p.id = ${principalId} and p.status = 'active' for share of p`),
      db.select().from(credentialIssuers).where(eq(credentialIssuers.id, row.id)),
    ],
  );
  const created = results[1][0];
  if (!created) {
    // The principal was erased between the read and the insert: answered as the read would.
    await assertPrincipalActive(tenant, principalId ?? row.id);
    throw new ApiError("internal_error");
  }
  return created;
}

/** A principal an issuer may name: an active one of the org (400 or 409 otherwise). */
async function assertPrincipalActive(tenant: Tenant, principalId: string): Promise<void> {
  const [principal] = await tenant.batch((db) => [
    db.select({ status: principals.status }).from(principals).where(eq(principals.id, principalId)),
  ]);
  const status = principal[0]?.status;
  if (status === "active") return;
  if (status === "erased") {
    throw new ApiError("principal_erased", [
      { path: "principal_id", message: "the principal is erased" },
    ]);
  }
  throw new ApiError("invalid_request", [{ path: "principal_id", message: "no such principal" }]);
}

/** A Postgres text[] literal of constraint types (a closed list: no quoting needed). */
export function textArray(values: readonly string[]): string {
  return `{${values.join(",")}}`;
}

function keySet(keys: IssuerJwk[]) {
  return { keys: keys.map((key) => ({ ...key })) };
}

/** The issuer as the API shows it (and as its ledger entries digest it). */
export function toIssuer(row: IssuerRow): CredentialIssuer {
  return {
    object: "credential_issuer",
    id: row.id,
    name: row.name,
    jwks: row.jwks ? keySet(row.jwks) : null,
    jwks_url: row.jwksUrl,
    jwks_cache:
      row.jwksUrl !== null && row.fetchedJwks && row.fetchedAt
        ? { ...keySet(row.fetchedJwks), fetched_at: row.fetchedAt.toISOString() }
        : null,
    principal_id: row.principalId,
    required_constraints: row.requiredConstraints,
    status_required: row.statusRequired,
    status: row.status,
    created: row.createdAt.toISOString(),
    revoked_at: isoOrNull(row.revokedAt),
  };
}
