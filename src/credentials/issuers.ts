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
 * - `createIssuer(tenant, body)`, `toIssuer(row)`: what `POST /v1/credential-issuers` does and
 *   the record the API shows.
 */
import { eq, sql } from "drizzle-orm";
import { importJWK, type JWK } from "jose";
import type { Database } from "../db/client";
import { credentialIssuers, type IssuerJwk, principals } from "../db/schema";
import type { Tenant } from "../db/tenant";
import type { Env } from "../env";
import { ApiError } from "../errors";
import { newId } from "../lib/ids";
import { checkOutboundUrl, outboundPolicy } from "../net/outbound";
import { isoOrNull } from "../schemas/common";
import type { CreateCredentialIssuer, CredentialIssuer } from "../schemas/credential-issuers";
import type { TrustAnchors } from "./hops";
import { isPinned, pinKey } from "./keys";

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

/** The keys an issuer is trusted with now: inline, or the last JWKS fetched from its URL. */
function keysOf(row: AnchorRow): IssuerJwk[] {
  return row.jwks ?? row.fetchedJwks ?? [];
}

/** The anchors the rows of `activeIssuers` make, oldest issuer first. */
export async function anchorsOf(
  _tenant: Tenant,
  _env: Env,
  rows: AnchorRow[],
  _root?: RootHeader,
): Promise<TrustAnchors> {
  return {
    keys: rows.flatMap((row) => keysOf(row).map((jwk) => ({ issuerId: row.id, jwk: jwk as JWK }))),
  };
}

/** The active issuers' keys as verifyChain's trust anchors: one round trip. */
export async function trustAnchorsFor(
  tenant: Tenant,
  env: Env,
  root?: RootHeader,
): Promise<TrustAnchors> {
  const [rows] = await tenant.batch((db) => [activeIssuers(db)]);
  return anchorsOf(tenant, env, rows, root);
}

/**
 * A key as stored: the RFC 7638 members and the issuer's `kid`. The schema has checked it with
 * the verifier's own rule; importing it checks what that cannot (a P-256 point on the curve).
 */
async function storedKey(jwk: Record<string, unknown>, path: string): Promise<IssuerJwk> {
  const pinned = pinKey(jwk);
  if (!isPinned(pinned)) throw invalidKey(path, pinned.problem);
  try {
    await importJWK(pinned.jwk, pinned.alg);
  } catch {
    throw invalidKey(path, "is not a valid public key (WebCrypto refuses it)");
  }
  const { kty, crv, x, y } = pinned.jwk as IssuerJwk;
  const kid = typeof jwk.kid === "string" ? { kid: jwk.kid } : {};
  return { kty, crv, x, ...(y === undefined ? {} : { y }), ...kid };
}

function invalidKey(path: string, message: string): ApiError {
  return new ApiError("invalid_request", [{ path, message, code: "custom" }]);
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

/**
 * Registers an issuer. A `principal_id` must name an active principal of the org: the insert
 * selects it `for share`, so a concurrent erasure cannot slip between check and insert.
 */
export async function createIssuer(
  tenant: Tenant,
  body: CreateCredentialIssuer,
): Promise<IssuerRow> {
  const jwks = body.jwks
    ? await Promise.all(body.jwks.keys.map((jwk, i) => storedKey(jwk, `jwks.keys.${i}`)))
    : null;
  const jwksUrl = body.jwks_url === undefined ? null : allowedJwksUrl(tenant.env, body.jwks_url);
  const id = newId();
  const principalId = body.principal_id ?? null;
  const values = sql`${id}, ${body.name}, ${jwks === null ? null : JSON.stringify(jwks)}::jsonb,
    ${jwksUrl}, ${principalId}::uuid`;
  const [, created, principal] = await tenant.batch((db) => [
    principalId === null
      ? db.execute(sql`insert into credential_issuers (id, name, jwks, jwks_url, principal_id)
          values (${values})`)
      : db.execute(sql`insert into credential_issuers (id, name, jwks, jwks_url, principal_id)
          select ${values} from principals p
          where p.id = ${principalId} and p.status = 'active' for share of p`),
    db.select().from(credentialIssuers).where(eq(credentialIssuers.id, id)),
    db
      .select({ status: principals.status })
      .from(principals)
      .where(eq(principals.id, principalId ?? id)),
  ]);
  const row = created[0];
  if (row) return row;
  if (principal[0]?.status === "erased") {
    throw new ApiError("principal_erased", [
      { path: "principal_id", message: "the principal is erased" },
    ]);
  }
  throw new ApiError("invalid_request", [{ path: "principal_id", message: "no such principal" }]);
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
    status: row.status,
    created: row.createdAt.toISOString(),
    revoked_at: isoOrNull(row.revokedAt),
  };
}
